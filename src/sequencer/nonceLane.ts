// One signer's nonce lane on one network: submissions wait here for a group commit (nonces, signing and
// journaling for all of them at once), and broadcasts go out in nonce order (a node may park a transaction
// whose predecessor it has not seen).
import type { SigningWallet } from "./signTransaction.js";
import type { SubmissionRecord } from "../store/submissionStore.js";

/** A transaction waiting for its nonce: signs itself once given one. */
export interface PendingSignature {
  sign(nonce: number): Promise<SubmissionRecord>;
  resolve(r: SubmissionRecord): void;
  reject(err: unknown): void;
  /** Its record once signed: a commit whose outcome is unknown names it to the caller. */
  signed?: SubmissionRecord;
}

export class NonceLane {
  /** Submissions waiting for the next group commit (the sequencer's, across lanes). */
  readonly waiting: PendingSignature[] = [];
  /** Journaled transactions waiting for the lane's next broadcast batch. */
  readonly toBroadcast: SubmissionRecord[] = [];
  /** A broadcast batch is queued behind the running one and will take everything in toBroadcast. */
  broadcastScheduled = false;
  /** Taken into a group commit or journaled, and not yet through a broadcast attempt. */
  unsent = 0;
  /** Whether the node answered the lane's last broadcast (batch): flow control applies only then. */
  nodeAnswering = true;
  /**
   * Of `unsent`, how many are recovery's (the journal sent again after a restart or a rewind). While there are
   * any, flow control holds no new write: new writes queue behind the resends, and holding their answers until
   * the lane was through held callers 10 s and more (12.8 s through a rewind and a restart).
   */
  resending = 0;

  /** The gateway wallet that signs for this lane, once a submission brought it (refills and fee bumps use it). */
  wallet: SigningWallet | undefined;
  /** Embedded market-fee chains: topped up with dev money already. */
  funded = false;

  /** Nothing waiting, queued or unsent: the lane can be dropped and made again on demand. */
  get idle(): boolean {
    return this.waiting.length === 0 && this.toBroadcast.length === 0 && this.unsent === 0 && !this.broadcastScheduled;
  }

  /** The next nonce to assign; undefined until read from the chain. */
  next: number | undefined;
  private broadcastTail: Promise<unknown> = Promise.resolve();

  constructor(readonly address: string) {}

  /** Queues a broadcast behind the lane's earlier ones. */
  enqueueBroadcast(fn: () => Promise<void>): Promise<void> {
    const run = this.broadcastTail.then(fn, fn);
    this.broadcastTail = run.catch(() => undefined);
    return run;
  }
}
