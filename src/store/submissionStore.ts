// The submission journal: every accepted write, recorded before the reply and updated as it is broadcast,
// mined or fails. The sequencer talks only to this interface (in-memory here; PostgreSQL/PGlite later).
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

export interface SubmissionStore {
  /**
   * Assigns the lane's next nonce (never below chainPending) and journals the record build() makes for it,
   * atomically: across replicas no nonce is handed out twice, and one whose build fails is not consumed.
   */
  reserveAndInsert(network: string, signer: string, chainPending: number, build: (nonce: number) => Promise<SubmissionRecord>): Promise<SubmissionRecord>;
  /** The same for `count` consecutive nonces in one transaction (group commit); build gets them in order. */
  reserveAndInsertMany(network: string, signer: string, chainPending: number, count: number, build: (nonces: number[]) => Promise<SubmissionRecord[]>): Promise<SubmissionRecord[]>;
  insert(record: SubmissionRecord): Promise<void>;
  update(queueId: string, update: SubmissionUpdate): Promise<void>;
  get(queueId: string): Promise<SubmissionRecord | undefined>;
  /** Records in a status, oldest first; only those created before `createdBefore` when given. */
  listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]>;
  /** Not yet mined nor failed, by signer and nonce: what recovery rebroadcasts (created before `createdBefore`). */
  listUnfinished(network: string, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]>;
  /** The record with this hash on this network, if journaled. */
  getByHash(network: string, hash: string): Promise<SubmissionRecord | undefined>;
}

export class MemorySubmissionStore implements SubmissionStore {
  private readonly records = new Map<string, SubmissionRecord>();
  private readonly lanes = new Map<string, number>();

  async reserveAndInsert(network: string, signer: string, chainPending: number, build: (nonce: number) => Promise<SubmissionRecord>): Promise<SubmissionRecord> {
    const [record] = await this.reserveAndInsertMany(network, signer, chainPending, 1, async ([n]) => [await build(n!)]);
    return record!;
  }

  async reserveAndInsertMany(network: string, signer: string, chainPending: number, count: number, build: (nonces: number[]) => Promise<SubmissionRecord[]>): Promise<SubmissionRecord[]> {
    const lane = `${network}/${signer}`;
    const first = Math.max(this.lanes.get(lane) ?? 0, chainPending);
    const records = await build(Array.from({ length: count }, (_, i) => first + i));
    for (const r of records) await this.insert(r);
    this.lanes.set(lane, first + count);
    return records;
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

  async getByHash(network: string, hash: string): Promise<SubmissionRecord | undefined> {
    for (const r of this.records.values()) if (r.network === network && r.hash === hash) return { ...r };
    return undefined;
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
