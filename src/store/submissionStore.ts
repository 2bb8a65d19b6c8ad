// The submission journal: every accepted write, recorded before the reply and updated as it is broadcast,
// mined or fails. The sequencer talks only to this interface (SQLite and PostgreSQL in their files; an in-memory one for tests in test/helpers).
export type SubmissionStatus = "pending" | "processing" | "completed" | "error";

export interface SubmissionRecord {
  queueId: string;
  network: string;
  signer: string;
  nonce: number;
  hash: string;
  /** Signed raw transaction, kept so it can be rebroadcast. */
  raw: string;
  /** "refill": a no-op self-transfer filling the nonce of a transaction rejected for good. */
  kind: "message" | "call" | "deploy" | "raw" | "refill" | "funding";
  status: SubmissionStatus;
  errorMessage?: string;
  createdAt: Date;
  processedAt?: Date;
  idempotencyKey?: string;
}

/**
 * Why an unfinished write is unfinished again, when it is: a write reopened after the node lost the block that
 * held it keeps the processedAt of that mining (reopening sets only its status back; moving it to a new nonce
 * clears it), so no column and no extra write is needed to tell it from a first send.
 */
export function reopenedReason(rec: Pick<SubmissionRecord, "status" | "processedAt">): string | undefined {
  if ((rec.status === "pending" || rec.status === "processing") && rec.processedAt !== undefined)
    return "the node no longer holds the block this write was mined in (it went back, or was restarted on older state); it is being sent again";
  return undefined;
}

export type SubmissionUpdate = Partial<Pick<SubmissionRecord, "status" | "errorMessage" | "processedAt" | "hash" | "raw">>;

/** One signer's share of a group commit: `count` consecutive nonces, never below chainPending. */
export interface LaneReservation {
  signer: string;
  chainPending: number;
  count: number;
  /** Makes the records for the nonces handed out, in order. */
  build(nonces: number[]): Promise<SubmissionRecord[]>;
}

export interface SubmissionStore {
  /**
   * Group commit: assigns each lane its next `count` nonces (never below its chainPending) and journals the
   * records its build() makes for them, for every lane in one transaction; records per lane, in the order
   * given. Across replicas no nonce is handed out twice; all or nothing, so a failing build journals and
   * consumes nothing.
   */
  reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]>;
  /**
   * Moves an unfinished record to its signer's next nonce (reserved as a group commit reserves, never below
   * chainPending) with the transaction build() signs for it, back to "pending": the node spent its old nonce
   * on something else. Same queueId; returns the record as now journaled.
   */
  moveToNextNonce(queueId: string, chainPending: number, build: (nonce: number) => Promise<Pick<SubmissionRecord, "hash" | "raw">>): Promise<SubmissionRecord>;
  insert(record: SubmissionRecord): Promise<void>;
  /** `urgent`: someone waits on this change; a store that batches status changes writes it (and its batch) now. */
  update(queueId: string, update: SubmissionUpdate, options?: { urgent?: boolean }): Promise<void>;
  get(queueId: string): Promise<SubmissionRecord | undefined>;
  /** Records in a status, oldest first; only those created before `createdBefore` when given. */
  listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]>;
  /** The newest `limit` records in a status, newest first; only those created at or before `atOrBefore` when given (the next page). */
  listNewest(network: string, status: SubmissionStatus, limit: number, atOrBefore?: Date): Promise<SubmissionRecord[]>;
  /**
   * Every signer this network's journal handed nonces out for, with the next nonce it would hand out: a signer
   * whose node has mined fewer is owed writes (forgottenWrites.ts).
   */
  laneHeads(network: string): Promise<{ signer: string; next: number }[]>;
  /** Not yet mined nor failed, by signer and nonce: what recovery rebroadcasts (created before `createdBefore`). */
  listUnfinished(network: string, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]>;
  /**
   * The caller-signed (kind "raw") record with this hash on this network, if journaled: a retried
   * eth_sendRawTransaction is answered from it. Only raw records are indexed by hash (see the schemas).
   */
  getRawByHash(network: string, hash: string): Promise<SubmissionRecord | undefined>;
  /** The record journaled under this idempotency key (an Idempotency-Key claim's journal key), if any. */
  getByIdempotencyKey(key: string): Promise<SubmissionRecord | undefined>;
  /** Deletes mined or failed records finished before `before` (unfinished ones stay); returns how many. */
  prune(before: Date): Promise<number>;
  /** The genesis hash pinned for a network (its first one), if any. */
  pinnedGenesis(network: string): Promise<string | undefined>;
  /** Pins (or, for a chain the gateway itself made anew, re-pins) a network's genesis hash. */
  pinGenesis(network: string, hash: string): Promise<void>;
  /** Told after a status change wrote webhook deliveries (the SQL journals: the outbox is theirs). */
  readonly outboxListeners?: Set<() => void>;
}
