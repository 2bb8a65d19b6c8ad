// A journal commit sent without an answer (the store's deadline passed while COMMIT was on its way) may have
// landed. Retrying it would journal each write twice, so the caller hears 503 with its write's queueId: if the
// row committed, the next journal pass sends it like any pending write and the queueId's status tells.
import { GatewayError } from "../errors.js";
import type { SubmissionRecord } from "../store/submissionStore.js";

/** Whether `err` is the store's "recorded: unknown" refusal (storeHealth.ts). */
export function commitUnknown(err: unknown): err is GatewayError {
  if (!(err instanceof GatewayError)) return false;
  const d = err.details;
  return typeof d === "object" && d !== null && !Array.isArray(d) && d.recorded === "unknown";
}

/** The refusal one caller hears for its write `rec` of that commit. */
export function mayBeRecorded(err: GatewayError, rec: SubmissionRecord | undefined): GatewayError {
  if (!rec) return err;
  return new GatewayError(
    "upstream_unavailable",
    `the journal did not confirm in time; this write (queueId ${rec.queueId}) may have been recorded: if it was, it is sent once — GET /zkt/transactions/${rec.queueId} tells`,
    { retryAfterSeconds: 2, cause: err, details: { recorded: "unknown", queueId: rec.queueId, hash: rec.hash } },
  );
}
