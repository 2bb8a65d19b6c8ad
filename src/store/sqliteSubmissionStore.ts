// The embedded submission journal: SQLite (better-sqlite3) in this process, one file under DATA_DIR. It
// replaced PGlite for the journal because PGlite (PostgreSQL compiled to WebAssembly) cost ~200-250 µs of CPU
// per ZKT write, more than the rest of the write together; SQLite's native code does the same work in a
// fraction of that (bench/RESULTS.md). Calls are synchronous and short (a group commit of a few dozen records
// takes ~1 ms), so they run on the event loop: posting the same rows to a worker cost about as much.
// Keys and idempotency answers stay in PGlite (written rarely), so PostgreSQL and the embedded store still
// share their SQL; this file holds only the journal's.
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { SqlClient } from "./sqlClient.js";
import { StatusBatcher } from "./statusBatcher.js";
import { fromRow, type SubmissionRow } from "./submissionRow.js";
import type { LaneReservation, SubmissionRecord, SubmissionStatus, SubmissionStore, SubmissionUpdate } from "./submissionStore.js";

/** A row as SQLite holds it: numbers for nonces, milliseconds for times. */
type Row = SubmissionRow & { nonce: number; created_at: number; processed_at: number | null };

/** Versioned like the SQL migrations: the file's user_version is the last applied. Never edit a shipped one. */
const SCHEMA = [
  `create table submissions (
     queue_id text primary key,
     network text not null,
     signer text not null,
     nonce integer not null,
     hash text not null,
     raw text not null,
     kind text not null,
     status text not null,
     error_message text,
     created_at integer not null,
     processed_at integer,
     idempotency_key text
   );
   create index submissions_status on submissions (network, status, created_at);
   create index submissions_hash on submissions (network, hash);
   create unique index submissions_idempotency on submissions (idempotency_key) where idempotency_key is not null;
   create table nonce_lanes (network text not null, signer text not null, next_nonce integer not null, primary key (network, signer)) without rowid;`,
  // What was done once to this journal (the PGlite take-over), so it is neither skipped when cut off nor redone.
  `create table journal_meta (key text primary key, value text not null) without rowid;`,
  // Only a caller-signed transaction is ever looked up by hash (getRawByHash). Indexing every record's hash,
  // random by nature, dirtied a random index page per record at each commit: ~40 % of the journal's CPU per
  // record and most of its WAL writes (bench).
  `drop index if exists submissions_hash;
   create index submissions_raw_hash on submissions (network, hash) where kind = 'raw';`,
];

const toRow = (r: SubmissionRecord): Row => ({
  queue_id: r.queueId,
  network: r.network,
  signer: r.signer,
  nonce: r.nonce,
  hash: r.hash,
  raw: r.raw,
  kind: r.kind,
  status: r.status,
  error_message: r.errorMessage ?? null,
  created_at: r.createdAt.getTime(),
  processed_at: r.processedAt?.getTime() ?? null,
  idempotency_key: r.idempotencyKey ?? null,
});

const PRUNE_SLICE = 1000;
/** Far in the future, for "no cutoff" (ms since epoch). */
const NO_CUTOFF = Number.MAX_SAFE_INTEGER;

export class SqliteSubmissionStore implements SubmissionStore {
  /** Next nonce per lane ("network\nsigner"), read from the file once; this process is its only writer. */
  private readonly next = new Map<string, number>();
  /** Group commits run one at a time (a build is async): a failed one hands its nonces to the next. */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly statuses: StatusBatcher;
  private readonly sql;

  private constructor(private readonly db: Database.Database) {
    const statement = <P extends unknown[] | object, R = Row>(text: string) => db.prepare<P, R>(text);
    this.sql = {
      insert: statement<Row, never>(
        `insert into submissions (queue_id, network, signer, nonce, hash, raw, kind, status, error_message, created_at, processed_at, idempotency_key)
         values (@queue_id, @network, @signer, @nonce, @hash, @raw, @kind, @status, @error_message, @created_at, @processed_at, @idempotency_key)`,
      ),
      lane: statement<[string, string], { next_nonce: number }>("select next_nonce from nonce_lanes where network = ? and signer = ?"),
      setLane: statement<[string, string, number], never>(
        "insert into nonce_lanes (network, signer, next_nonce) values (?, ?, ?) on conflict (network, signer) do update set next_nonce = max(next_nonce, excluded.next_nonce)",
      ),
      status: statement<[SubmissionStatus, number | null, string], never>("update submissions set status = ?, processed_at = coalesce(?, processed_at) where queue_id = ?"),
      // "processing" only ever follows "pending": flushed late, it must not undo a "completed" written meanwhile.
      processing: statement<[string], never>("update submissions set status = 'processing' where queue_id = ? and status = 'pending'"),
      update: statement<[SubmissionStatus | null, string | null, number | null, string | null, string | null, string], never>(
        `update submissions set status = coalesce(?, status), error_message = coalesce(?, error_message), processed_at = coalesce(?, processed_at),
           hash = coalesce(?, hash), raw = coalesce(?, raw) where queue_id = ?`,
      ),
      get: statement<[string]>("select * from submissions where queue_id = ?"),
      byIdempotencyKey: statement<[string]>("select * from submissions where idempotency_key = ?"),
      rawByHash: statement<[string, string]>("select * from submissions where network = ? and hash = ? and kind = 'raw' order by created_at limit 1"),
      unfinished: statement<[string, number, number]>(
        "select * from submissions where network = ? and status in ('pending', 'processing') and created_at < ? order by signer, nonce limit ?",
      ),
      byStatus: statement<[string, SubmissionStatus, number, number]>("select * from submissions where network = ? and status = ? and created_at < ? order by created_at limit ?"),
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
      countBySigner: statement<[string, number], { n: number }>("select count(*) as n from submissions where signer = ? and created_at >= ? and kind <> 'refill'"),
    };
    const flushStatuses = db.transaction((status: SubmissionStatus, ids: string[], at: number | null) => {
      for (const id of ids) {
        if (status === "processing") this.sql.processing.run(id);
        else this.sql.status.run(status, at, id);
      }
    });
    this.statuses = new StatusBatcher(async (status, ids, at) => void flushStatuses(status, ids, at?.getTime() ?? null));
  }

  /**
   * Opens (creating and migrating) the journal file under `dataDir`. Given the embedded PGlite store of an
   * earlier version, a new journal first takes over its records and nonce lanes, so an upgrade loses no
   * accepted write.
   */
  static async open(dataDir: string, options: { importFrom?: SqlClient } = {}): Promise<SqliteSubmissionStore> {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, "journal.sqlite");
    // Exclusive: one gateway per data directory; a second fails here instead of handing out the same nonces.
    let db: Database.Database;
    try {
      // No busy wait: the only other user of the file would be another gateway, which must not share it.
      db = new Database(file, { timeout: 0 });
      // Exclusive before WAL: the WAL index then lives in this process's memory, and the lock is held for good.
      db.pragma("locking_mode = EXCLUSIVE");
      db.pragma("journal_mode = WAL");
      // The lock is taken by the first write (a read only shares it): take it now, before anything is used.
      db.exec("begin immediate; commit");
    } catch (err) {
      if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
      throw new Error(`the journal ${file} is in use by another process: one gateway (or keys CLI) per DATA_DIR at a time`, { cause: err });
    }
    // WAL: a commit is one append. synchronous=NORMAL: a commit is in the OS's hands before the reply, so a
    // killed process loses nothing; a crash of the machine may lose the last commits (DATABASE_URL is the
    // durable choice).
    db.pragma("synchronous = NORMAL");
    const version = db.pragma("user_version", { simple: true }) as number;
    db.transaction(() => {
      for (let v = version; v < SCHEMA.length; v++) db.exec(SCHEMA[v]!);
      db.pragma(`user_version = ${SCHEMA.length}`);
    })();
    const store = new SqliteSubmissionStore(db);
    if (options.importFrom && !db.prepare("select 1 from journal_meta where key = 'pglite_takeover'").get()) await store.importFrom(options.importFrom);
    return store;
  }

  /**
   * Copies an earlier PGlite journal (records, then lanes) in slices, notes that it did, then empties the old
   * one: one journal from now on. Cut off part way, it starts again on the next open and skips what it copied.
   */
  private async importFrom(old: SqlClient): Promise<void> {
    const copy = this.db.prepare<Row, never>(
      `insert or ignore into submissions (queue_id, network, signer, nonce, hash, raw, kind, status, error_message, created_at, processed_at, idempotency_key)
       values (@queue_id, @network, @signer, @nonce, @hash, @raw, @kind, @status, @error_message, @created_at, @processed_at, @idempotency_key)`,
    );
    const insertAll = this.db.transaction((rows: Row[]) => {
      for (const r of rows) copy.run(r);
    });
    let after = "";
    for (;;) {
      const rows = await old.query<SubmissionRow>("select * from submissions where queue_id > $1 order by queue_id limit 5000", [after]);
      if (rows.length === 0) break;
      insertAll(rows.map((r) => toRow(fromRow(r))));
      after = rows[rows.length - 1]!.queue_id;
    }
    const lanes = await old.query<{ network: string; signer: string; next_nonce: string | number }>("select network, signer, next_nonce from nonce_lanes");
    this.db.transaction(() => {
      for (const l of lanes) this.sql.setLane.run(l.network, l.signer, Number(l.next_nonce));
      this.db.prepare("insert into journal_meta (key, value) values ('pglite_takeover', ?)").run(new Date().toISOString());
    })();
    await old.transaction(async (tx) => {
      await tx.query("delete from submissions");
      await tx.query("delete from nonce_lanes");
    });
  }

  reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]> {
    const run = async (): Promise<SubmissionRecord[][]> => {
      const key = (signer: string): string => `${network}\n${signer}`;
      for (const l of lanes) if (!this.next.has(key(l.signer))) this.next.set(key(l.signer), this.sql.lane.get(network, l.signer)?.next_nonce ?? 0);
      const firsts = lanes.map((l) => Math.max(this.next.get(key(l.signer))!, l.chainPending));
      const built = await Promise.all(lanes.map((l, i) => l.build(Array.from({ length: l.count }, (_, j) => firsts[i]! + j))));
      const ends = lanes.map((l, i) => firsts[i]! + l.count);
      // Lanes and records commit together, or (a duplicate queueId, say) neither does.
      this.db.transaction(() => {
        lanes.forEach((l, i) => this.sql.setLane.run(network, l.signer, ends[i]!));
        for (const r of built.flat()) this.sql.insert.run(toRow(r));
      })();
      lanes.forEach((l, i) => this.next.set(key(l.signer), ends[i]!));
      return built;
    };
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  async insert(record: SubmissionRecord): Promise<void> {
    this.sql.insert.run(toRow(record));
  }

  async update(queueId: string, u: SubmissionUpdate, options: { urgent?: boolean } = {}): Promise<void> {
    if (u.errorMessage === undefined && u.hash === undefined && u.raw === undefined && u.status !== undefined) return this.statuses.mark(queueId, u.status, u.processedAt, options.urgent);
    if (u.status !== undefined && u.status !== "processing") this.statuses.forget(queueId);
    this.sql.update.run(u.status ?? null, u.errorMessage ?? null, u.processedAt?.getTime() ?? null, u.hash ?? null, u.raw ?? null, queueId);
  }

  async get(queueId: string): Promise<SubmissionRecord | undefined> {
    const row = this.sql.get.get(queueId);
    return row ? fromRow(row) : undefined;
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

  /** Submissions signed by `signer` since `since`, on any network (per-key usage). */
  async countBySignerSince(signer: string, since: Date): Promise<number> {
    return this.sql.countBySigner.get(signer, since.getTime())?.n ?? 0;
  }

  async close(): Promise<void> {
    await this.statuses.flushAll();
    this.db.close();
  }
}
