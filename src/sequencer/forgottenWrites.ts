// A node that went back (a restart on older state, a rewind of any depth, the embedded chain's dump older
// than the journal) no longer has the newest writes the journal holds as completed. The chain follower
// reopens what it saw confirmed in its last blocks; deeper than that, and after a gateway restart (no blocks
// followed at all), only the journal knows. Its completed writes are looked up newest first and, where the
// node does not know them, made pending again: the journal pass then sends their signed bytes in nonce order
// as it sends any unfinished write, and the lanes behind them move again. The node lost a tail of its blocks,
// so the walk stops once a stretch of writes is all there; it has no depth limit (a fixed 10,000 left a
// 100-block rewind's older writes "completed" though not on chain, and every later nonce behind the hole).
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { Logger } from "../log/logger.js";
import type { SubmissionRecord, SubmissionStore } from "../store/submissionStore.js";

/**
 * Hashes looked up per call (one JSON-RPC batch): a 100-block rewind under load reopened ~28,000, and 100 a call
 * took 30 s; 500 a call timed out on a node busy taking the resends, so 200.
 */
const BATCH = 200;
/** Writes found on the node, in a row (newest first), that end the walk. */
const FOUND_IN_A_ROW = 200;

export interface ForgottenWritesOptions {
  network: string;
  store: SubmissionStore;
  pool: Pick<UpstreamPool, "callMany">;
  log: Logger;
  /** Told how many writes were reopened (metrics). */
  onReopened?: (n: number) => void;
}

export interface WalkBound {
  /**
   * Every completed write created after this is looked up before the walk may stop (the node went back to a
   * block walked then): writes sent after the node came back are on it, and a stretch of those must not end
   * the walk before the lost ones behind them.
   */
  since?: Date;
}

/** Makes completed writes the node does not have pending again; returns how many. */
export async function reopenForgottenWrites({ network, store, pool, log, onReopened }: ForgottenWritesOptions, bound: WalkBound = {}): Promise<number> {
  let reopened = 0;
  let foundInARow = 0;
  let cursor: Date | undefined;
  /** Records at the page boundary's instant, already looked at (pages overlap at that one instant). */
  let atCursor = new Set<string>();
  while (foundInARow < FOUND_IN_A_ROW) {
    const page = (await store.listNewest(network, "completed", BATCH, cursor)).filter((r) => !atCursor.has(r.queueId));
    if (page.length === 0) break;
    const missing = await notOnNode(pool, page);
    // Gathered by the journal's status batcher into one statement; the last page's are written at once.
    await Promise.all(missing.map((rec, i) => store.update(rec.queueId, { status: "pending" }, { urgent: i === missing.length - 1 })));
    reopened += missing.length;
    onReopened?.(missing.length);
    const last = page[page.length - 1]!.createdAt;
    const pastBound = bound.since === undefined || last < bound.since;
    foundInARow = missing.length === 0 && pastBound ? foundInARow + page.length : 0;
    atCursor = new Set([
      ...(cursor?.getTime() === last.getTime() ? atCursor : []),
      ...page.filter((r) => r.createdAt.getTime() === last.getTime()).map((r) => r.queueId),
    ]);
    cursor = last;
  }
  if (reopened > 0) log.warn("the node no longer has writes the journal has as completed: they are sent again", { reopened });
  return reopened;
}

async function notOnNode(pool: ForgottenWritesOptions["pool"], records: SubmissionRecord[]): Promise<SubmissionRecord[]> {
  const known = await pool.callMany(records.map((rec) => ({ method: "eth_getTransactionByHash", params: [rec.hash] })));
  return records.filter((_, i) => {
    const answer = known[i];
    if (!answer?.ok) throw answer?.error ?? new Error("no answer to eth_getTransactionByHash");
    // Only in its pool (a block that held it is gone) is not "completed" either: it goes out again, which the
    // node answers "already known".
    return answer.result === null || (answer.result as { blockNumber?: unknown }).blockNumber == null;
  });
}
