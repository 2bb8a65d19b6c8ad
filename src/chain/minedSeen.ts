// Transactions answered as mined, and in which block: a receipt a client has seen must not turn null because
// the next read went to a node a block behind (with the level node gone, one did). Bounded, oldest out first.

/** Hashes remembered; the newest matter (a lagging node lacks only the last few blocks). */
const SEEN_MAX = 20_000;

export class MinedSeen {
  private readonly blocks = new Map<string, number>();

  /** Notes a by-hash answer (receipt or transaction) that names its block. */
  note(hash: string, answer: unknown): void {
    const block = (answer as { blockNumber?: unknown } | null)?.blockNumber;
    if (typeof block !== "string") return;
    const key = hash.toLowerCase();
    if (this.blocks.has(key)) return;
    if (this.blocks.size >= SEEN_MAX) this.blocks.delete(this.blocks.keys().next().value!);
    this.blocks.set(key, Number.parseInt(block, 16));
  }

  /** The block `hash` was answered mined in, if it was. */
  blockOf(hash: string): number | undefined {
    return this.blocks.get(hash.toLowerCase());
  }
}
