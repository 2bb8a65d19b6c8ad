// One signer's nonce lane on one network: nonce assignment, signing and journaling run one at a time, and
// broadcasts go out in nonce order (a node may park a transaction whose predecessor it has not seen).
export class NonceLane {
  /** The next nonce to assign; undefined until read from the chain. */
  next: number | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private broadcastTail: Promise<unknown> = Promise.resolve();

  constructor(readonly address: string) {}

  /** Runs fn while holding the lane. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Queues a broadcast behind the lane's earlier ones. */
  enqueueBroadcast(fn: () => Promise<void>): Promise<void> {
    const run = this.broadcastTail.then(fn, fn);
    this.broadcastTail = run.catch(() => undefined);
    return run;
  }
}
