// A node that comes back from a dump older than the journal (the embedded chain's state file: anvil dumps it
// every 2 s, and a torn one is replaced by a whole copy up to 10 s older) no longer has the newest writes the
// journal holds as completed, and a restarted gateway has no followed blocks to notice it by. Before the
// start-up pass, those writes are looked up newest first and, where the node does not know them, made pending
// again: the pass then sends their signed bytes as it sends any unfinished write. The node lost a tail of its
// blocks, so the walk stops once a stretch of writes is all there.
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { Logger } from "../log/logger.js";
import type { SubmissionStore } from "../store/submissionStore.js";

const BATCH = 40;
/** The most completed writes looked at, newest first. */
const SCAN_LIMIT = 10_000;
/** Batches found whole on the node, in a row, that end the walk. */
const FOUND_IN_A_ROW = 2;

export interface ForgottenWritesOptions {
  network: string;
  store: SubmissionStore;
  pool: UpstreamPool;
  log: Logger;
}

/** Makes completed writes the node does not have pending again; returns how many. */
export async function reopenForgottenWrites({ network, store, pool, log }: ForgottenWritesOptions): Promise<number> {
  const newest = await store.listNewest(network, "completed", SCAN_LIMIT);
  let reopened = 0;
  let foundInARow = 0;
  for (let i = 0; i < newest.length && foundInARow < FOUND_IN_A_ROW; i += BATCH) {
    const batch = newest.slice(i, i + BATCH);
    const known = await pool.callMany(batch.map((rec) => ({ method: "eth_getTransactionByHash", params: [rec.hash] })));
    let missing = 0;
    for (const [j, rec] of batch.entries()) {
      const answer = known[j];
      if (!answer?.ok) throw answer?.error ?? new Error("no answer to eth_getTransactionByHash");
      if (answer.result !== null) continue;
      await store.update(rec.queueId, { status: "pending" }, { urgent: true });
      missing++;
    }
    reopened += missing;
    foundInARow = missing === 0 ? foundInARow + 1 : 0;
  }
  if (reopened > 0) log.warn("the node came back without writes the journal has as completed: they are sent again", { reopened });
  return reopened;
}
