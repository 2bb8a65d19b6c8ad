// Which transaction spent a signer's nonce, read from the block where it was spent. A write is signed again at a
// new nonce only when this proves the old one is not on chain: a node answering null by hash (a transaction
// index rebuilt after a restart, limited history, a balancer's lagging member) had the gateway sign mined
// writes a second time. The block is found by the signer's nonce at past blocks (a binary search), then read
// whole; nothing here trusts a by-hash lookup. Blocks read are kept for the pass: a lane's lost writes sit
// together, dozens to a block, so one search serves them all.
import { Transaction } from "ethers";
import type { UpstreamPool } from "../chain/upstreamPool.js";

/** Blocks scanBack reads at most per search, and at once. */
const SCAN_BLOCKS = 2_000;
const SCAN_BATCH = 50;

export type SpentBy =
  /** The nonce was spent by this write (`hash` is what was mined: the record's own, or an earlier signing of it). */
  | { verdict: "mined"; hash: string; block: number }
  /** Spent by another transaction, or the state spent it in a block that holds no transaction of the signer's at it. */
  | { verdict: "absent"; block: number }
  /** Could not be told (a block or a past state the node would not give): the write waits. */
  | { verdict: "unknown"; why: string };

type Reader = Pick<UpstreamPool, "call">;

interface BlockTx {
  hash: string;
  from: string;
  nonce: string;
  to: string | null;
  input: string;
  value: string;
}

export interface SpentWrite {
  signer: string;
  nonce: number;
  hash: string;
  raw: string;
}

/** One pass's view of where nonces were spent; made anew each pass (a rewind changes the past). */
export class NonceSpenders {
  /** `${signer}:${block}` -> the signer's nonce at that block. */
  private readonly counts = new Map<string, number>();
  /** `${signer}:${nonce}` -> the transaction that spent it, from blocks read whole. */
  private readonly spent = new Map<string, BlockTx & { block: number }>();
  /** Per signer: nonces [from, to) known spent within blocks read whole (a nonce there without a transaction is absent). */
  private readonly covered = new Map<string, { from: number; to: number; block: number }[]>();

  /** The node answered no past state: searches read blocks instead (scanBack). */
  private pastStateMissing = false;
  /** Blocks scanBack read whole (all their transactions). */
  private readonly blockTxs = new Map<number, BlockTx[]>();

  constructor(private readonly pool: Reader) {}

  /**
   * Finds the spender of the write's nonce. `repriced`: the write may have been signed before with other fees
   * (fee networks), so a spender with its payload is it.
   */
  async of(write: SpentWrite, repriced: boolean): Promise<SpentBy> {
    const signer = write.signer.toLowerCase();
    try {
      let found = this.lookUp(signer, write.nonce);
      if (found === undefined && this.pastStateMissing) found = await this.scanBack(signer, write.nonce);
      if (found === undefined) {
        const block = await this.blockThatSpent(signer, write.nonce).catch(async (err: unknown) => {
          // A node without past states (restarted on a state dump, pruned) cannot be searched by nonce: its
          // blocks are read instead, newest first (scanBack).
          this.pastStateMissing = true;
          const scanned = await this.scanBack(signer, write.nonce);
          if (scanned === undefined) throw err;
          return scanned;
        });
        if (typeof block === "object" && "verdict" in block) return block;
        if (typeof block === "object") return this.decide(block, write, repriced);
        if (!(await this.read(signer, block))) return { verdict: "unknown", why: `block ${block}, where nonce ${write.nonce} was spent, was not given whole` };
        found = this.lookUp(signer, write.nonce) ?? { block };
      }
      return this.decide(found, write, repriced);
    } catch (err) {
      return { verdict: "unknown", why: `the node did not answer: ${(err as Error).message}` };
    }
  }

  private decide(found: (BlockTx & { block: number }) | { block: number }, write: SpentWrite, repriced: boolean): SpentBy {
    {
      const tx = "hash" in found ? found : undefined;
      if (!tx) return { verdict: "absent", block: found.block };
      if (tx.hash.toLowerCase() === write.hash.toLowerCase() || (repriced && samePayload(tx, write.raw)))
        return { verdict: "mined", hash: tx.hash, block: tx.block };
      return { verdict: "absent", block: tx.block };
    }
  }

  /**
   * Without past states: blocks read whole from the newest back (those read before skipped, not re-asked)
   * until one holds a transaction of the signer's below `nonce`, at most SCAN_BLOCKS new ones. The spender if
   * found, `{ block }` when every block since then was read and none spent it, undefined when the scan ran out.
   */
  private async scanBack(signer: string, nonce: number): Promise<(BlockTx & { block: number }) | { block: number } | undefined> {
    const head = await this.head();
    let fresh = 0;
    for (let n = head; n >= 0 && fresh < SCAN_BLOCKS; ) {
      const missing: number[] = [];
      for (let m = n; m >= 0 && missing.length < SCAN_BATCH; m--) if (!this.blockTxs.has(m)) missing.push(m);
      const got = await Promise.all(missing.map((m) => this.pool.call("eth_getBlockByNumber", [`0x${m.toString(16)}`, true])));
      got.forEach((b, i) => {
        const txs = ((b as { transactions?: BlockTx[] } | null)?.transactions ?? []).filter(
          (tx) => typeof tx === "object" && tx !== null && typeof tx.from === "string",
        );
        if (b !== null) this.blockTxs.set(missing[i]!, txs);
        for (const tx of txs) this.spent.set(`${tx.from.toLowerCase()}:${Number(BigInt(tx.nonce))}`, { ...tx, block: missing[i]! });
      });
      fresh += missing.length;
      // Walk down the blocks now read, in order: a gap (a block not given) ends what can be told.
      for (; n >= 0; n--) {
        const txs = this.blockTxs.get(n);
        if (txs === undefined) break;
        for (const tx of txs) {
          if (tx.from.toLowerCase() !== signer) continue;
          const spentHere = Number(BigInt(tx.nonce));
          if (spentHere === nonce) return { ...tx, block: n };
          // Every block above this one was read, and none spent the nonce there.
          if (spentHere < nonce) return { block: n + 1 };
        }
      }
      if (missing.length === 0) break;
    }
    return undefined;
  }

  /** From blocks already read: the spender, `{ block }` when the nonce was spent there by no transaction, or undefined. */
  private lookUp(signer: string, nonce: number): (BlockTx & { block: number }) | { block: number } | undefined {
    const tx = this.spent.get(`${signer}:${nonce}`);
    if (tx) return tx;
    const range = this.covered.get(signer)?.find((r) => nonce >= r.from && nonce < r.to);
    return range ? { block: range.block } : undefined;
  }

  /** The first block whose state has the nonce spent; past the newest block when only the state spent it. */
  private async blockThatSpent(signer: string, nonce: number): Promise<number | SpentBy> {
    // The state at the newest block spends it, else no block did: a node whose state ran ahead of its blocks
    // (anvil's dump is not atomic), once a block mined between the two reads is ruled out.
    let head = await this.head();
    if ((await this.countAt(signer, head)) <= nonce) {
      const again = await this.head();
      if (again === head || (await this.countAt(signer, again)) <= nonce) return { verdict: "absent", block: again + 1 };
      head = again;
    }
    let lo = 0;
    let hi = head;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await this.countAt(signer, mid)) > nonce) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Reads a block whole, keeping every transaction of it and the signer's nonces it spent; false when not given. */
  private async read(signer: string, block: number): Promise<boolean> {
    const tag = `0x${block.toString(16)}`;
    const got = (await this.pool.call("eth_getBlockByNumber", [tag, true])) as { transactions?: unknown[] } | null;
    if (!got || !Array.isArray(got.transactions)) return false;
    for (const tx of got.transactions as BlockTx[]) {
      if (typeof tx !== "object" || tx === null || typeof tx.from !== "string") return false;
      this.spent.set(`${tx.from.toLowerCase()}:${Number(BigInt(tx.nonce))}`, { ...tx, block });
    }
    const before = block > 0 ? await this.countAt(signer, block - 1) : 0;
    const after = await this.countAt(signer, block);
    let ranges = this.covered.get(signer);
    if (!ranges) this.covered.set(signer, (ranges = []));
    ranges.push({ from: before, to: after, block });
    return true;
  }

  private async head(): Promise<number> {
    return Number(BigInt((await this.pool.call("eth_blockNumber", [])) as string));
  }

  private async countAt(signer: string, block: number): Promise<number> {
    const key = `${signer}:${block}`;
    let n = this.counts.get(key);
    if (n === undefined) {
      n = Number(BigInt((await this.pool.call("eth_getTransactionCount", [signer, `0x${block.toString(16)}`])) as string));
      this.counts.set(key, n);
    }
    return n;
  }
}

/** The same call (to, data, value) as the write's own signing: an earlier signing of it (re-priced) mined. */
function samePayload(tx: BlockTx, raw: string): boolean {
  const ours = Transaction.from(raw);
  return (
    (tx.to ?? null)?.toLowerCase() === (ours.to ?? null)?.toLowerCase() && tx.input.toLowerCase() === ours.data.toLowerCase() && BigInt(tx.value) === ours.value
  );
}
