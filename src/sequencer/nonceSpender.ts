// Which transaction spent a signer's nonce, read from the block where it was spent. A write is signed again at a
// new nonce only when this proves the old one is not on chain: a node answering null by hash (a transaction
// index rebuilt after a restart, limited history, a balancer's lagging member) had the gateway sign mined
// writes a second time. The block is found by the signer's nonce at past blocks (a binary search), then read
// whole; nothing here trusts a by-hash lookup. Blocks read whole are kept: a lane's lost writes sit together,
// dozens to a block, so one search serves them all, and a later pass starts where a slow one stopped (while the
// newest block kept is still the node's: a rewind drops them).
import { Transaction } from "ethers";
import type { UpstreamPool } from "../chain/upstreamPool.js";

/** Blocks scanBack reads at most per search, and at once. */
const SCAN_BLOCKS = 2_000;
const SCAN_BATCH = 8;
/**
 * A whole block's deadline: megabytes on a busy chain, read in the background with no client waiting, so a
 * client-sized UPSTREAM_TIMEOUT_MS does not fail it (a search that fails leaves its write waiting a pass).
 */
const BLOCK_READ_MS = 30_000;
/** Blocks kept across passes at most; past this the cache starts again (memory). */
const KEEP_BLOCKS = 4_000;

export type SpentBy =
  /**
   * The nonce was spent by this write (`hash` is what was mined: the record's own, or an earlier signing of it),
   * in `block` (whose hash is `blockHash`, when the block was read whole).
   */
  | { verdict: "mined"; hash: string; block: number; blockHash?: string }
  /** Spent by another transaction, or the state spent it in a block that holds no transaction of the signer's at it. */
  | { verdict: "absent"; block: number }
  /** Could not be told (a block or a past state the node would not give): the write waits. */
  | { verdict: "unknown"; why: string };

type Reader = Pick<UpstreamPool, "call" | "callPatient">;

interface BlockTx {
  hash: string;
  from: string;
  nonce: string;
  to: string | null;
  input: string;
  value: string;
}

/** A transaction of a block read whole, with where it was. */
type Found = BlockTx & { block: number; blockHash?: string };

export interface SpentWrite {
  signer: string;
  nonce: number;
  hash: string;
  raw: string;
}

/** Where nonces were spent, as read from the node's blocks. Past states are asked again each pass (newPass). */
export class NonceSpenders {
  /** `${signer}:${block}` -> the signer's nonce at that block. */
  private counts = new Map<string, number>();
  /** `${signer}:${nonce}` -> the transaction that spent it, from blocks read whole. */
  private readonly spent = new Map<string, Found>();
  /** Per signer: nonces [from, to) known spent within blocks read whole (a nonce there without a transaction is absent). */
  private covered = new Map<string, { from: number; to: number; block: number }[]>();

  /** The node answered no past state: searches read blocks instead (scanBack). */
  private pastStateMissing = false;
  /** Blocks scanBack read whole (all their transactions). */
  private readonly blockTxs = new Map<number, BlockTx[]>();
  /** The newest block read whole, and its hash: the blocks kept are the node's while it still has this one. */
  private tip: { block: number; hash: string } | undefined;
  /** This pass's check that the blocks kept are still the node's (made once, at its first search). */
  private checked: Promise<void> | undefined;

  constructor(private readonly pool: Reader) {}

  /**
   * A new pass: past states are asked again (a rewind changes them); the blocks read whole are kept unless the
   * node no longer has the newest of them (then a rewind replaced them, and all go).
   */
  newPass(): void {
    this.counts = new Map();
    this.covered = new Map();
    this.pastStateMissing = false;
    this.checked = undefined;
    if (this.blockTxs.size > KEEP_BLOCKS) this.forgetBlocks();
  }

  private forgetBlocks(): void {
    this.blockTxs.clear();
    this.spent.clear();
    this.tip = undefined;
  }

  private async checkKept(): Promise<void> {
    const tip = this.tip;
    if (!tip) return;
    const now = (await this.pool.call("eth_getBlockByNumber", [`0x${tip.block.toString(16)}`, false]).catch(() => null)) as { hash?: unknown } | null;
    if (typeof now?.hash !== "string" || now.hash.toLowerCase() !== tip.hash) this.forgetBlocks();
  }

  /** A block read whole: every transaction of it kept, and the newest block's hash noted. */
  private keep(block: number, got: { hash?: unknown }, txs: BlockTx[]): void {
    this.blockTxs.set(block, txs);
    const blockHash = typeof got.hash === "string" ? got.hash : undefined;
    for (const tx of txs) this.spent.set(`${tx.from.toLowerCase()}:${Number(BigInt(tx.nonce))}`, { ...tx, block, ...(blockHash ? { blockHash } : {}) });
    if (typeof got.hash === "string" && (!this.tip || block > this.tip.block)) this.tip = { block, hash: got.hash.toLowerCase() };
  }

  /**
   * Finds the spender of the write's nonce. `repriced`: the write may have been signed before with other fees
   * (fee networks), so a spender with its payload is it.
   */
  async of(write: SpentWrite, repriced: boolean): Promise<SpentBy> {
    const signer = write.signer.toLowerCase();
    try {
      this.checked ??= this.checkKept();
      await this.checked;
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

  private decide(found: Found | { block: number }, write: SpentWrite, repriced: boolean): SpentBy {
    const tx = "hash" in found ? found : undefined;
    if (!tx) return { verdict: "absent", block: found.block };
    if (tx.hash.toLowerCase() === write.hash.toLowerCase() || (repriced && samePayload(tx, write.raw)))
      return { verdict: "mined", hash: tx.hash, block: tx.block, ...(tx.blockHash ? { blockHash: tx.blockHash } : {}) };
    return { verdict: "absent", block: tx.block };
  }

  /**
   * Without past states: blocks read whole from the newest back (those read before skipped, not re-asked)
   * until one holds a transaction of the signer's below `nonce`, at most SCAN_BLOCKS new ones. The spender if
   * found, `{ block }` when every block since then was read and none spent it, undefined when the scan ran out.
   */
  private async scanBack(signer: string, nonce: number): Promise<Found | { block: number } | undefined> {
    const head = await this.head();
    let fresh = 0;
    for (let n = head; n >= 0 && fresh < SCAN_BLOCKS; ) {
      const missing: number[] = [];
      for (let m = n; m >= 0 && missing.length < SCAN_BATCH; m--) if (!this.blockTxs.has(m)) missing.push(m);
      const got = await Promise.all(missing.map((m) => this.wholeBlock(m)));
      got.forEach((b, i) => {
        if (b === null) return;
        const txs = (b.transactions ?? []).filter((tx): tx is BlockTx => typeof tx === "object" && tx !== null && typeof (tx as BlockTx).from === "string");
        this.keep(missing[i]!, b, txs);
      });
      fresh += missing.length;
      // Walk down the blocks now read, in order: a gap (a block not given) ends what can be told.
      for (; n >= 0; n--) {
        const txs = this.blockTxs.get(n);
        if (txs === undefined) break;
        // The whole block first: a signer's transactions in one block run in nonce order, so one below the
        // nonce sought comes before the one that spent it (deciding at the first below signed mined writes again).
        const mine = txs.filter((tx) => tx.from.toLowerCase() === signer);
        const spender = mine.find((tx) => Number(BigInt(tx.nonce)) === nonce);
        if (spender) return this.spent.get(`${signer}:${nonce}`) ?? { ...spender, block: n };
        // Every block above this one was read, and none spent the nonce there.
        if (mine.some((tx) => Number(BigInt(tx.nonce)) < nonce)) return { block: n + 1 };
      }
      if (missing.length === 0) break;
    }
    return undefined;
  }

  /** From blocks already read: the spender, `{ block }` when the nonce was spent there by no transaction, or undefined. */
  private lookUp(signer: string, nonce: number): Found | { block: number } | undefined {
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
    const got = await this.wholeBlock(block);
    if (!got || !Array.isArray(got.transactions)) return false;
    const txs = got.transactions as BlockTx[];
    if (txs.some((tx) => typeof tx !== "object" || tx === null || typeof tx.from !== "string")) return false;
    this.keep(block, got, txs);
    const before = block > 0 ? await this.countAt(signer, block - 1) : 0;
    const after = await this.countAt(signer, block);
    let ranges = this.covered.get(signer);
    if (!ranges) this.covered.set(signer, (ranges = []));
    ranges.push({ from: before, to: after, block });
    return true;
  }

  private async wholeBlock(block: number): Promise<{ hash?: unknown; transactions?: unknown[] } | null> {
    return (await this.pool.callPatient("eth_getBlockByNumber", [`0x${block.toString(16)}`, true], BLOCK_READ_MS)) as {
      hash?: unknown;
      transactions?: unknown[];
    } | null;
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
