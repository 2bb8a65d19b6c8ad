// The journal in memory: a test fake of SubmissionStore (same rules as the SQL stores, no file).
import type { LaneReservation, SubmissionRecord, SubmissionStatus, SubmissionStore, SubmissionUpdate } from "../../src/store/submissionStore.js";

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

  async moveToNextNonce(
    queueId: string,
    chainPending: number,
    build: (nonce: number) => Promise<Pick<SubmissionRecord, "hash" | "raw">>,
  ): Promise<SubmissionRecord> {
    const r = this.records.get(queueId);
    if (!r) throw new Error(`no submission ${queueId}`);
    const lane = `${r.network}/${r.signer}`;
    const nonce = Math.max(this.lanes.get(lane) ?? 0, chainPending);
    const { hash, raw } = await build(nonce);
    this.lanes.set(lane, nonce + 1);
    const { errorMessage: _e, processedAt: _p, ...rest } = r;
    const moved: SubmissionRecord = { ...rest, nonce, hash, raw, status: "pending" };
    this.records.set(queueId, moved);
    return { ...moved };
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

  private readonly genesis = new Map<string, string>();
  async pinnedGenesis(network: string): Promise<string | undefined> {
    return this.genesis.get(network);
  }
  async pinGenesis(network: string, hash: string): Promise<void> {
    this.genesis.set(network, hash);
  }

  async prune(before: Date): Promise<number> {
    let n = 0;
    for (const [id, r] of this.records) {
      if ((r.status === "completed" || r.status === "error") && (r.processedAt ?? r.createdAt) < before) n += Number(this.records.delete(id));
    }
    return n;
  }

  async laneHeads(network: string): Promise<{ signer: string; next: number }[]> {
    return [...this.lanes].filter(([k]) => k.startsWith(`${network}/`)).map(([k, next]) => ({ signer: k.slice(network.length + 1), next }));
  }

  async listNewest(network: string, status: SubmissionStatus, limit: number, atOrBefore?: Date): Promise<SubmissionRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.network === network && r.status === status && (!atOrBefore || r.createdAt <= atOrBefore))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, limit)
      .map((r) => ({ ...r }));
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
