// The submission journal: every accepted write, recorded before the reply and updated as it is broadcast,
// mined or fails. The sequencer talks only to this interface (in-memory here; SQLite and PostgreSQL in their files).
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
  insert(record: SubmissionRecord): Promise<void>;
  /** `urgent`: someone waits on this change; a store that batches status changes writes it (and its batch) now. */
  update(queueId: string, update: SubmissionUpdate, options?: { urgent?: boolean }): Promise<void>;
  get(queueId: string): Promise<SubmissionRecord | undefined>;
  /** Records in a status, oldest first; only those created before `createdBefore` when given. */
  listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]>;
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
}

export class MemorySubmissionStore implements SubmissionStore {
  private readonly records = new Map<string, SubmissionRecord>();
  private readonly lanes = new Map<string, number>();

  async reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]> {
    const firsts = lanes.map((l) => Math.max(this.lanes.get(`${network}/${l.signer}`) ?? 0, l.chainPending));
    // Every build before anything is journaled or reserved: all or nothing, as in the SQL store.
    const built = await Promise.all(lanes.map((l, i) => l.build(Array.from({ length: l.count }, (_, j) => firsts[i]! + j))));
    for (const r of built.flat()) if (this.records.has(r.queueId)) throw new Error(`duplicate queueId ${r.queueId}`);
    for (const r of built.flat()) await this.insert(r);
    lanes.forEach((l, i) => this.lanes.set(`${network}/${l.signer}`, firsts[i]! + l.count));
    return built;
  }

  async insert(record: SubmissionRecord): Promise<void> {
    if (this.records.has(record.queueId)) throw new Error(`duplicate queueId ${record.queueId}`);
    this.records.set(record.queueId, { ...record });
  }
  async update(queueId: string, update: SubmissionUpdate): Promise<void> {
    const r = this.records.get(queueId);
    // "processing" only ever follows "pending" (a late mark must not undo "completed"), as in the SQL store.
    if (r && !(update.status === "processing" && r.status !== "pending")) Object.assign(r, update);
  }
  async get(queueId: string): Promise<SubmissionRecord | undefined> {
    const r = this.records.get(queueId);
    return r ? { ...r } : undefined;
  }
  async listUnfinished(network: string, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.network === network && (r.status === "pending" || r.status === "processing") && (!createdBefore || r.createdAt < createdBefore))
      .sort((a, b) => a.signer.localeCompare(b.signer) || a.nonce - b.nonce)
      .slice(0, limit)
      .map((r) => ({ ...r }));
  }

  async getByIdempotencyKey(key: string): Promise<SubmissionRecord | undefined> {
    for (const r of this.records.values()) if (r.idempotencyKey === key) return { ...r };
    return undefined;
  }

  async getRawByHash(network: string, hash: string): Promise<SubmissionRecord | undefined> {
    for (const r of this.records.values()) if (r.network === network && r.hash === hash && r.kind === "raw") return { ...r };
    return undefined;
  }

  async prune(before: Date): Promise<number> {
    let n = 0;
    for (const [id, r] of this.records) {
      if ((r.status === "completed" || r.status === "error") && (r.processedAt ?? r.createdAt) < before) n += Number(this.records.delete(id));
    }
    return n;
  }

  async listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    const out: SubmissionRecord[] = [];
    for (const r of this.records.values()) {
      if (r.network === network && r.status === status && (!createdBefore || r.createdAt < createdBefore)) out.push({ ...r });
      if (out.length >= limit) break;
    }
    return out;
  }
}
