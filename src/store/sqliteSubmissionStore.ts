// The embedded submission journal: SQLite (node:sqlite) in this process, one file under DATA_DIR. It
// replaced PGlite for the journal because PGlite (PostgreSQL compiled to WebAssembly) cost more CPU per ZKT
// write than the rest of the write together; SQLite's native code does the same work in a fraction of that
// (bench/README.md). Calls are synchronous and short, so they run on the event loop: posting the same rows to
// a worker cost about as much.
// The file (embeddedDatabase.ts) also holds API keys and Idempotency-Key answers; this holds only the journal's SQL.
import { openEmbeddedDatabase } from "./embeddedDatabase.js";
import { type SqliteDatabase, statement as prepare, transaction } from "./sqliteFile.js";
import { StatusBatcher } from "./statusBatcher.js";
import { fromRow, type SubmissionRow } from "./submissionRow.js";
import type { LaneReservation, SubmissionRecord, SubmissionStatus, SubmissionStore, SubmissionUpdate } from "./submissionStore.js";
import { EVENT_KINDS, eventOfStatus } from "./webhookStore.js";

/** A row as SQLite holds it: numbers for nonces, milliseconds for times. */
type Row = SubmissionRow & { nonce: number; created_at: number; processed_at: number | null };

type InsertParams = [string, string, string, number, string, string, string, string, string | null, number, number | null, string | null];

// Positional, not @named: node:sqlite binds an object's names one by one, a visible share of a record's
// journal cost (bench/sqliteDriver.ts).
const insertParams = (r: SubmissionRecord): InsertParams => [
  r.queueId,
  r.network,
  r.signer,
  r.nonce,
  r.hash,
  r.raw,
  r.kind,
  r.status,
  r.errorMessage ?? null,
  r.createdAt.getTime(),
  r.processedAt?.getTime() ?? null,
  r.idempotencyKey ?? null,
];

const PRUNE_SLICE = 1000;
/** Far in the future, for "no cutoff" (ms since epoch). */
const NO_CUTOFF = Number.MAX_SAFE_INTEGER;

export class SqliteSubmissionStore implements SubmissionStore {
  /** Next nonce per lane ("network\nsigner"), read from the file once; this process is its only writer. */
  private readonly next = new Map<string, number>();
  /** The last nonce hand-out queued (inTurn). */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly statuses: StatusBatcher;
  private readonly sql;
  /** Whether any webhook is active: without one, a status change writes no outbox statement (the file has one writer: this process). */
  private webhooks = false;
  /** Told after a status change wrote webhook deliveries (each network's dispatcher then looks at once). */
  readonly outboxListeners = new Set<() => void>();

  /** On the embedded file (embeddedDatabase.ts); close() closes the file. */
  constructor(private readonly db: SqliteDatabase) {
    const statement = <P extends unknown[], R = Row>(text: string) => prepare<P, R>(db, text);
    this.sql = {
      insert: statement<InsertParams, never>(
        `insert into submissions (queue_id, network, signer, nonce, hash, raw, kind, status, error_message, created_at, processed_at, idempotency_key)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      laneHeads: statement<[string], { signer: string; next_nonce: number }>("select signer, next_nonce from nonce_lanes where network = ?"),
      lane: statement<[string, string], { next_nonce: number }>("select next_nonce from nonce_lanes where network = ? and signer = ?"),
      setLane: statement<[string, string, number], never>(
        "insert into nonce_lanes (network, signer, next_nonce) values (?, ?, ?) on conflict (network, " +
          "signer) do update set next_nonce = max(next_nonce, excluded.next_nonce)",
      ),
      status: statement<[SubmissionStatus, number | null, string], never>(
        "update submissions set status = ?, processed_at = coalesce(?, processed_at) where queue_id = ?",
      ),
      // "processing" only ever follows "pending": flushed late, it must not undo a "completed" written meanwhile.
      processing: statement<[string], never>("update submissions set status = 'processing' where queue_id = ? and status = 'pending'"),
      update: statement<[SubmissionStatus | null, string | null, number | null, string | null, string | null, string], never>(
        `update submissions set status = coalesce(?, status), error_message = coalesce(?, error_message), processed_at = coalesce(?, processed_at),
           hash = coalesce(?, hash), raw = coalesce(?, raw) where queue_id = ?`,
      ),
      renonce: statement<[number, string, string, string], never>(
        "update submissions set nonce = ?, hash = ?, raw = ?, status = 'pending', error_message = null, processed_at = null where queue_id = ?",
      ),
      get: statement<[string]>("select * from submissions where queue_id = ?"),
      byIdempotencyKey: statement<[string]>("select * from submissions where idempotency_key = ?"),
      rawByHash: statement<[string, string]>("select * from submissions where network = ? and hash = ? and kind = 'raw' order by created_at limit 1"),
      unfinished: statement<[string, number, number]>(
        "select * from submissions where network = ? and status in ('pending', 'processing') and created_at < ? order by signer, nonce limit ?",
      ),
      byStatus: statement<[string, SubmissionStatus, number, number]>(
        "select * from submissions where network = ? and status = ? and created_at < ? order by created_at limit ?",
      ),
      newestByStatus: statement<[string, SubmissionStatus, number, number]>(
        "select * from submissions where network = ? and status = ? and created_at <= ? order by created_at desc limit ?",
      ),
      // Through the status index, one probe per network (a distinct would read every entry of it).
      networks: statement<[], { network: string }>(
        `with recursive n(network) as (
           select min(network) from submissions
           union all select (select min(network) from submissions where network > n.network) from n where n.network is not null
         ) select network from n where network is not null`,
      ),
      // In slices (~30 ms each here), so a first prune of a long history does not hold the event loop for long.
      prune: statement<[string, SubmissionStatus, number], never>(
        `delete from submissions where rowid in (select rowid from submissions where network = ? and status = ? and created_at < ? limit ${PRUNE_SLICE})`,
      ),
      getMeta: statement<[string], { value: string }>("select value from journal_meta where key = ?"),
      setMeta: statement<[string, string], never>("insert into journal_meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value"),
      countBySigner: statement<[string, number], { n: number }>(
        "select count(*) as n from submissions where signer = ? and created_at >= ? and kind <> 'refill'",
      ),
      // The webhook outbox: one delivery per endpoint of the write's key that wants the event, written in
      // the transaction of the status change itself (a crash between the two cannot lose one).
      outbox: statement<[string, string, number, string], never>(
        `insert into webhook_deliveries (id, webhook_id, event, queue_id, error_message, created_at)
         select lower(hex(randomblob(16))), w.id, ?1, s.queue_id, s.error_message, ?3
         from submissions s join webhooks w on w.signer = s.signer
         where s.queue_id = ?4 and w.disabled_at is null and instr(w.events, ?2) > 0 and s.kind in ${EVENT_KINDS}
           and substr(s.network, 1, length(w.network) + 1) = w.network || ':'`,
      ),
      // A write's own callback (callbackUrl): once, by its dedupe name (the callback's attach may have written it first).
      outboxCallback: statement<[string, number, string], never>(
        `insert or ignore into webhook_deliveries (id, webhook_id, event, queue_id, error_message, url, dedupe, created_at)
         select lower(hex(randomblob(16))), c.webhook_id, ?1, s.queue_id, s.error_message, c.url, 'cb:' || s.queue_id || ':' || ?1, ?2
         from submissions s join write_callbacks c on c.queue_id = s.queue_id where s.queue_id = ?3`,
      ),
      anyWebhook: statement<[], { n: number }>("select count(*) as n from webhooks where disabled_at is null"),
    };
    this.webhooks = (this.sql.anyWebhook.get()?.n ?? 0) > 0;
    const flushStatuses = transaction(db, (status: SubmissionStatus, ids: string[], at: number | null) => {
      const event = this.webhooks ? eventOfStatus(status) : undefined;
      let events = 0;
      for (const id of ids) {
        if (status === "processing") this.sql.processing.run(id);
        else this.sql.status.run(status, at, id);
        if (event) events += this.outbox(event, id);
      }
      return events;
    });
    this.statuses = new StatusBatcher(async (status, ids, at) => {
      if (flushStatuses(status, ids, at?.getTime() ?? null) > 0) for (const f of this.outboxListeners) f();
    });
  }

  /** The journal alone on the embedded file (tests, and tools that read it while the gateway is stopped). */
  static async open(dataDir: string): Promise<SqliteSubmissionStore> {
    return new SqliteSubmissionStore(openEmbeddedDatabase(dataDir));
  }

  /** A lane's next nonce as this process knows it (read from the file the first time). */
  private laneNext(network: string, signer: string): number {
    const key = `${network}\n${signer}`;
    let next = this.next.get(key);
    if (next === undefined) this.next.set(key, (next = this.sql.lane.get(network, signer)?.next_nonce ?? 0));
    return next;
  }

  /** Runs nonce hand-outs one at a time (their builds are async): a failed one hands its nonces to the next. */
  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]> {
    return this.inTurn(async () => {
      const firsts = lanes.map((l) => Math.max(this.laneNext(network, l.signer), l.chainPending));
      const built = await Promise.all(lanes.map((l, i) => l.build(Array.from({ length: l.count }, (_, j) => firsts[i]! + j))));
      const ends = lanes.map((l, i) => firsts[i]! + l.count);
      // Lanes and records commit together, or (a duplicate queueId, say) neither does.
      transaction(this.db, () => {
        lanes.forEach((l, i) => this.sql.setLane.run(network, l.signer, ends[i]!));
        for (const r of built.flat()) this.sql.insert.run(...insertParams(r));
      })();
      lanes.forEach((l, i) => this.next.set(`${network}\n${l.signer}`, ends[i]!));
      return built;
    });
  }

  moveToNextNonce(queueId: string, chainPending: number, build: (nonce: number) => Promise<Pick<SubmissionRecord, "hash" | "raw">>): Promise<SubmissionRecord> {
    // In turn with group commits: both hand out this process's nonces.
    return this.inTurn(async () => {
      const row = this.sql.get.get(queueId);
      if (!row) throw new Error(`no submission ${queueId}`);
      const rec = fromRow(row);
      const nonce = Math.max(this.laneNext(rec.network, rec.signer), chainPending);
      const { hash, raw } = await build(nonce);
      this.statuses.forget(queueId);
      transaction(this.db, () => {
        this.sql.setLane.run(rec.network, rec.signer, nonce + 1);
        this.sql.renonce.run(nonce, hash, raw, queueId);
      })();
      this.next.set(`${rec.network}\n${rec.signer}`, nonce + 1);
      const { errorMessage: _e, processedAt: _p, ...rest } = rec;
      return { ...rest, nonce, hash, raw, status: "pending" as const };
    });
  }

  async insert(record: SubmissionRecord): Promise<void> {
    this.sql.insert.run(...insertParams(record));
  }

  async update(queueId: string, u: SubmissionUpdate, options: { urgent?: boolean } = {}): Promise<void> {
    if (u.errorMessage === undefined && u.hash === undefined && u.raw === undefined && u.status !== undefined)
      return this.statuses.mark(queueId, u.status, u.processedAt, options.urgent);
    if (u.status !== undefined && u.status !== "processing") this.statuses.forget(queueId);
    const write = () => this.sql.update.run(u.status ?? null, u.errorMessage ?? null, u.processedAt?.getTime() ?? null, u.hash ?? null, u.raw ?? null, queueId);
    const event = this.webhooks && u.status !== undefined ? eventOfStatus(u.status) : undefined;
    if (!event) return void write();
    // With its outbox rows, in one transaction.
    const events = transaction(this.db, () => {
      write();
      return this.outbox(event, queueId);
    })();
    if (events > 0) for (const f of this.outboxListeners) f();
  }

  /** A write's outcome event for its key's endpoints and its own callback (in the caller's transaction); how many rows. */
  private outbox(event: string, queueId: string): number {
    const now = Date.now();
    return this.sql.outbox.run(event, `,${event},`, now, queueId).changes + this.sql.outboxCallback.run(event, now, queueId).changes;
  }

  /** Webhooks were added or removed (webhookTables.ts): whether status changes write outbox rows. */
  refreshWebhooks(): void {
    this.webhooks = (this.sql.anyWebhook.get()?.n ?? 0) > 0;
  }

  async get(queueId: string): Promise<SubmissionRecord | undefined> {
    const row = this.sql.get.get(queueId);
    return row ? this.statuses.overlay(fromRow(row)) : undefined;
  }

  async getByIdempotencyKey(key: string): Promise<SubmissionRecord | undefined> {
    const row = this.sql.byIdempotencyKey.get(key);
    return row ? fromRow(row) : undefined;
  }

  async getRawByHash(network: string, hash: string): Promise<SubmissionRecord | undefined> {
    const row = this.sql.rawByHash.get(network, hash);
    return row ? fromRow(row) : undefined;
  }

  async listUnfinished(network: string, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    return this.sql.unfinished.all(network, createdBefore?.getTime() ?? NO_CUTOFF, limit).map(fromRow);
  }

  async listByStatus(network: string, status: SubmissionStatus, limit: number, createdBefore?: Date): Promise<SubmissionRecord[]> {
    return this.sql.byStatus.all(network, status, createdBefore?.getTime() ?? NO_CUTOFF, limit).map(fromRow);
  }

  async laneHeads(network: string): Promise<{ signer: string; next: number }[]> {
    return this.sql.laneHeads.all(network).map((r) => ({ signer: r.signer, next: Number(r.next_nonce) }));
  }

  async listNewest(network: string, status: SubmissionStatus, limit: number, atOrBefore?: Date): Promise<SubmissionRecord[]> {
    return this.sql.newestByStatus.all(network, status, atOrBefore?.getTime() ?? Number.MAX_SAFE_INTEGER, limit).map(fromRow);
  }

  async prune(before: Date): Promise<number> {
    let total = 0;
    for (const { network } of this.sql.networks.all()) {
      for (const status of ["completed", "error"] as const) {
        for (;;) {
          const { changes } = this.sql.prune.run(network, status, before.getTime());
          total += changes;
          if (changes < PRUNE_SLICE) break;
          await new Promise((r) => setImmediate(r));
        }
      }
    }
    return total;
  }

  async pinnedGenesis(network: string): Promise<string | undefined> {
    return this.sql.getMeta.get(`genesis:${network}`)?.value;
  }

  async pinGenesis(network: string, hash: string): Promise<void> {
    this.sql.setMeta.run(`genesis:${network}`, hash);
  }

  /** Submissions signed by `signer` since `since`, on any network (per-key usage). */
  async countBySignerSince(signer: string, since: Date): Promise<number> {
    return this.sql.countBySigner.get(signer, since.getTime())?.n ?? 0;
  }

  async close(): Promise<void> {
    await this.statuses.flushAll();
    this.db.close();
  }
}
