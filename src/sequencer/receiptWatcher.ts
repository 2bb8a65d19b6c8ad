// Watches broadcast transactions until they are mined, then updates the journal and wakes waiters. Each poll
// reads the receipts of the blocks mined since the last one (eth_getBlockReceipts: one call per block, however
// many transactions are outstanding); a hash not found that way for a while (tracked after its block was read,
// or a node without eth_getBlockReceipts) is asked for by hash, in batches, at a slower pace. Writes that
// cannot revert, on networks that never replace a transaction, are followed by their signer's mined nonce
// instead: a block's receipts cost the node ~25 % of its intake at full load (bench), a nonce almost nothing.
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { SubmissionStore } from "../store/submissionStore.js";
import type { JsonValue } from "../errors.js";
import type { Logger } from "../log/logger.js";

export interface RpcReceipt {
  status: string;
  blockNumber: string;
  blockHash: string;
  gasUsed: string;
  contractAddress: string | null;
  transactionHash: string;
  logs: { address: string; topics: string[]; data: string; logIndex: string }[];
}

interface Watched {
  queueId: string | undefined;
  /** Whether a later hash was tracked for the same queueId (a fee bump), so the journal holds another one. */
  superseded: boolean;
  waiters: ((r: RpcReceipt) => void)[];
  since: number;
  /** When it was last asked for by hash. */
  askedAt: number;
}

const BATCH = 100;
/** Most blocks read per poll; a longer gap (the watcher was idle or the node raced ahead) is left to by-hash polls. */
const MAX_BLOCKS_PER_POLL = 16;

export class ReceiptWatcher {
  private readonly watched = new Map<string, Watched>();
  /** Every hash tracked per submission (fee bumps add hashes), so a mined one finds its siblings at once. */
  private readonly hashesOf = new Map<string, string[]>();
  /** signer → nonce → queueId, for trackNonce. */
  private readonly byNonce = new Map<string, Map<number, string>>();
  private timer: NodeJS.Timeout | undefined;
  /** Whether the pending timer is a fast one. */
  private timerFast = false;
  private polling = false;
  /** Callers waiting for a receipt (wait: true, deploys): while there are any, polls come every fastPollMs. */
  private waiting = 0;
  private readonly fastPollMs: number;
  /** The last block whose receipts were read; undefined until the first poll after (re)starting. */
  private lastBlock: number | undefined;
  /** False once the node refused eth_getBlockReceipts: then every hash is asked for by hash. */
  private blockReceipts = true;
  /** A hash unseen in block receipts this long is asked for by hash (and then again each time as long). */
  private readonly byHashAfterMs: number;

  constructor(
    private readonly pool: Pick<UpstreamPool, "call" | "callMany">,
    private readonly store: Pick<SubmissionStore, "update">,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {
    this.byHashAfterMs = Math.max(1_000, pollMs * 8);
    // A poll that finds no new block is one eth_blockNumber: cheap enough to ask often while someone waits.
    this.fastPollMs = Math.max(10, Math.min(25, Math.round(pollMs / 5)));
  }

  /** Follows a broadcast transaction until mined; the journal record is completed then. */
  track(hash: string, queueId?: string): void {
    const w = this.watched.get(hash);
    if (w) {
      if (w.queueId === undefined && queueId !== undefined) {
        w.queueId = queueId;
        this.sibling(queueId, hash);
      }
    } else {
      const now = Date.now();
      this.watched.set(hash, { queueId, superseded: false, waiters: [], since: now, askedAt: now });
      if (queueId !== undefined) this.sibling(queueId, hash);
    }
    this.ensureTimer();
  }

  /**
   * Follows a broadcast transaction that cannot revert (no code runs: a value-less call to the zero address,
   * a self-transfer) by its signer's mined nonce: once that passes `nonce`, it is mined, successfully. Only
   * where the gateway never replaces a transaction (zero-fee networks), so the nonce is this transaction's.
   */
  trackNonce(signer: string, nonce: number, queueId: string): void {
    let nonces = this.byNonce.get(signer);
    if (!nonces) this.byNonce.set(signer, (nonces = new Map()));
    nonces.set(nonce, queueId);
    this.ensureTimer();
  }

  private get following(): boolean {
    return this.watched.size > 0 || this.byNonce.size > 0;
  }

  private sibling(queueId: string, hash: string): void {
    const hashes = this.hashesOf.get(queueId);
    if (!hashes) return void this.hashesOf.set(queueId, [hash]);
    for (const h of hashes) {
      const other = this.watched.get(h);
      if (other) other.superseded = true;
    }
    hashes.push(hash);
  }

  /** Resolves with the receipt once mined; rejects after timeoutMs. */
  wait(hash: string, timeoutMs: number): Promise<RpcReceipt> {
    this.track(hash);
    this.waiting++;
    const promise = new Promise<RpcReceipt>((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        this.waiting--;
        return true;
      };
      const timer = setTimeout(() => settle() && reject(new Error(`not mined within ${timeoutMs} ms`)), timeoutMs);
      this.watched.get(hash)!.waiters.push((r) => {
        clearTimeout(timer);
        if (settle()) resolve(r);
      });
    });
    this.ensureTimer();
    return promise;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.lastBlock = undefined;
  }

  /** One poll at a time: the next is scheduled when the last is done, sooner while someone waits. */
  private ensureTimer(): void {
    const fast = this.waiting > 0;
    if (this.timer && (this.timerFast || !fast)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerFast = fast;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll().then(() => {
        if (this.following) this.ensureTimer();
      });
    }, fast ? this.fastPollMs : this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    if (!this.following) return this.stop();
    this.polling = true;
    try {
      if (this.byNonce.size > 0) await this.readMinedNonces();
      // With nothing followed by hash, the next hash tracked starts again from the head.
      if (this.watched.size === 0) this.lastBlock = undefined;
      else {
        if (this.blockReceipts) await this.readNewBlocks();
        await this.askByHash(this.blockReceipts ? Date.now() - this.byHashAfterMs : Infinity);
      }
    } catch (err) {
      this.log.warn("receipt poll failed; will retry", { error: (err as Error).message });
    } finally {
      this.polling = false;
    }
  }

  /**
   * Every nonce-followed signer's mined nonce, in one batch: what lies below it is completed. A nonce stops
   * being followed only once its record says so: a failed journal write is tried again at the next poll
   * rather than leaving the record unfinished for the periodic resume to find (and re-send, as if stuck).
   */
  private async readMinedNonces(): Promise<void> {
    const signers = [...this.byNonce.keys()];
    const outcomes = await this.pool.callMany(signers.map((s) => ({ method: "eth_getTransactionCount", params: [s, "latest"] as JsonValue[] })));
    const processedAt = new Date();
    const done: Promise<void>[] = [];
    outcomes.forEach((o, i) => {
      if (!o.ok) return;
      const signer = signers[i]!;
      const mined = Number(BigInt(o.result as string));
      const nonces = this.byNonce.get(signer)!;
      for (const [nonce, queueId] of nonces) {
        if (nonce >= mined) continue;
        done.push(
          this.store.update(queueId, { status: "completed", processedAt }).then(() => {
            nonces.delete(nonce);
            if (nonces.size === 0 && this.byNonce.get(signer) === nonces) this.byNonce.delete(signer);
          }),
        );
      }
    });
    await Promise.all(done);
  }

  /** Receipts of every block mined since the last poll, matched against what is watched. */
  private async readNewBlocks(): Promise<void> {
    const head = Number(BigInt((await this.pool.call("eth_blockNumber", [])) as string));
    // Starting (again): the newest block may already hold a hash tracked just now.
    const from = Math.max((this.lastBlock ?? head - 1) + 1, head - MAX_BLOCKS_PER_POLL + 1);
    if (from > head) return;
    const blocks = Array.from({ length: head - from + 1 }, (_, i) => from + i);
    const outcomes = await this.pool.callMany(blocks.map((n) => ({ method: "eth_getBlockReceipts", params: ["0x" + n.toString(16)] as JsonValue[] })));
    for (const [i, o] of outcomes.entries()) {
      if (!o.ok) {
        // Not a transport failure (those throw): the node does not serve the method. By hash it is.
        this.log.info("eth_getBlockReceipts refused; following transactions by hash", { error: o.error.message });
        this.blockReceipts = false;
        return;
      }
      // null: a node behind the one that gave the head; read the block again next poll.
      if (o.result === null) return;
      const receipts = o.result as unknown as RpcReceipt[];
      const found = receipts.filter((r) => this.watched.has(r.transactionHash));
      await Promise.all(found.map((r) => this.mined(r.transactionHash, r)));
      this.lastBlock = blocks[i]!;
    }
  }

  /** Asks by hash for every watched transaction last asked for before `askedBefore` (ms since epoch). */
  private async askByHash(askedBefore: number): Promise<void> {
    const now = Date.now();
    const hashes: string[] = [];
    for (const [hash, w] of this.watched) {
      if (w.askedAt < askedBefore || askedBefore === Infinity) {
        w.askedAt = now;
        hashes.push(hash);
      }
    }
    for (let i = 0; i < hashes.length; i += BATCH) {
      const chunk = hashes.slice(i, i + BATCH);
      const outcomes = await this.pool.callMany(chunk.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] as JsonValue[] })));
      await Promise.all(outcomes.map((o, j) => (o.ok && o.result ? this.mined(chunk[j]!, o.result as unknown as RpcReceipt) : undefined)));
    }
  }

  private async mined(hash: string, receipt: RpcReceipt): Promise<void> {
    const w = this.watched.get(hash);
    this.watched.delete(hash);
    if (!w) return;
    if (w.queueId) {
      // A fee-bumped submission has several hashes for one nonce; once one mines, the others never will.
      for (const h of this.hashesOf.get(w.queueId) ?? []) {
        const other = this.watched.get(h);
        if (other) (this.watched.delete(h), w.waiters.push(...other.waiters));
      }
      this.hashesOf.delete(w.queueId);
    }
    const wake = (): void => w.waiters.forEach((f) => f(receipt));
    if (!w.queueId) return wake();
    const ok = receipt.status === "0x1";
    // The journal already holds the latest tracked hash; only an older (superseded) one that mined is
    // written. Plain status changes are batched by the store; with a caller waiting, the batch goes at once
    // (waiting for it was a third of a deploy's time after its block; bench), so a status read after the
    // answer agrees with it. The receipt is the chain's word: callers hear it even if the journal fails.
    try {
      await this.store.update(
        w.queueId,
        { status: ok ? "completed" : "error", processedAt: new Date(), ...(w.superseded ? { hash } : {}), ...(ok ? {} : { errorMessage: "the transaction reverted on chain" }) },
        { urgent: w.waiters.length > 0 },
      );
    } finally {
      wake();
    }
  }
}
