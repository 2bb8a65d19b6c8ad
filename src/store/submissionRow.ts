// A journal record as a row, the same columns in PostgreSQL and in SQLite: how each database hands
// back its numbers and times differs (bigint as text or number; timestamptz as Date or text; SQLite's
// milliseconds), so reading accepts any of them.
import type { SubmissionRecord, SubmissionStatus } from "./submissionStore.js";

export interface SubmissionRow {
  queue_id: string;
  network: string;
  signer: string;
  nonce: string | number;
  hash: string;
  raw: string;
  kind: SubmissionRecord["kind"];
  status: SubmissionStatus;
  error_message: string | null;
  created_at: Date | string | number;
  processed_at: Date | string | number | null;
  idempotency_key: string | null;
}

export function fromRow(r: SubmissionRow): SubmissionRecord {
  return {
    queueId: r.queue_id,
    network: r.network,
    signer: r.signer,
    nonce: Number(r.nonce),
    hash: r.hash,
    raw: r.raw,
    kind: r.kind,
    status: r.status,
    createdAt: new Date(r.created_at),
    ...(r.error_message !== null ? { errorMessage: r.error_message } : {}),
    ...(r.processed_at !== null ? { processedAt: new Date(r.processed_at) } : {}),
    ...(r.idempotency_key !== null ? { idempotencyKey: r.idempotency_key } : {}),
  };
}
