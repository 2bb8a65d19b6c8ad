// Watches broadcast transactions until they are mined: one batched eth_getTransactionReceipt round trip per
// poll for everything outstanding, then the journal is updated and waiters are woken.
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
}

const BATCH = 100;

export class ReceiptWatcher {
  private readonly watched = new Map<string, Watched>();
  /** Every hash tracked per submission (fee bumps add hashes), so a mined one finds its siblings at once. */
  private readonly hashesOf = new Map<string, string[]>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly pool: UpstreamPool,
    private readonly store: SubmissionStore,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {}

  /** Follows a broadcast transaction until mined; the journal record is completed then. */
  track(hash: string, queueId?: string): void {
    const w = this.watched.get(hash);
    if (w) {
      if (w.queueId === undefined && queueId !== undefined) {
        w.queueId = queueId;
        this.sibling(queueId, hash);
      }
    } else {
      this.watched.set(hash, { queueId, superseded: false, waiters: [], since: Date.now() });
      if (queueId !== undefined) this.sibling(queueId, hash);
    }
    this.ensureTimer();
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
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not mined within ${timeoutMs} ms`)), timeoutMs);
      this.watched.get(hash)!.waiters.push((r) => {
        clearTimeout(timer);
        resolve(r);
      });
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    if (this.watched.size === 0) return this.stop();
    this.polling = true;
    try {
      const hashes = [...this.watched.keys()];
      for (let i = 0; i < hashes.length; i += BATCH) {
        const chunk = hashes.slice(i, i + BATCH);
        const outcomes = await this.pool.callMany(chunk.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] as JsonValue[] })));
        await Promise.all(outcomes.map((o, j) => (o.ok && o.result ? this.mined(chunk[j]!, o.result as unknown as RpcReceipt) : undefined)));
      }
    } catch (err) {
      this.log.warn("receipt poll failed; will retry", { error: (err as Error).message });
    } finally {
      this.polling = false;
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
      const ok = receipt.status === "0x1";
      // The journal already holds the latest tracked hash; only an older (superseded) one that mined is
      // written. Plain status changes are coalesced into one statement by the store.
      await this.store.update(w.queueId, {
        status: ok ? "completed" : "error",
        processedAt: new Date(),
        ...(w.superseded ? { hash } : {}),
        ...(ok ? {} : { errorMessage: "the transaction reverted on chain" }),
      });
    }
    for (const wake of w.waiters) wake(receipt);
  }
}
