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
  waiters: ((r: RpcReceipt) => void)[];
  since: number;
}

const BATCH = 100;

export class ReceiptWatcher {
  private readonly watched = new Map<string, Watched>();
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
    if (w) w.queueId ??= queueId;
    else this.watched.set(hash, { queueId, waiters: [], since: Date.now() });
    this.ensureTimer();
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
      for (const [h, other] of this.watched) if (other.queueId === w.queueId) (this.watched.delete(h), w.waiters.push(...other.waiters));
      const ok = receipt.status === "0x1";
      await this.store.update(w.queueId, { status: ok ? "completed" : "error", hash, processedAt: new Date(), ...(ok ? {} : { errorMessage: "the transaction reverted on chain" }) });
    }
    for (const wake of w.waiters) wake(receipt);
  }
}
