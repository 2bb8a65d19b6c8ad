// The embedded store: one SQLite file under DATA_DIR (node:sqlite, in this process) holding the submission
// journal, API keys and Idempotency-Key answers. It is called journal.sqlite because it held only the journal
// at first; the keys joined it from PGlite (whose resident memory was most of an idle gateway's).
// With DATABASE_URL, PostgreSQL holds the same data instead (migrations.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { isBusy, openSqlite, pragma, type SqliteDatabase, transaction } from "./sqliteFile.js";

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
  // What was done once to this journal (an earlier version's take-over of its PGlite store; kept: a shipped schema).
  `create table journal_meta (key text primary key, value text not null) without rowid;`,
  // Only a caller-signed transaction is ever looked up by hash (getRawByHash). Indexing every record's hash,
  // random by nature, dirtied a random index page per record at each commit: much of the journal's CPU per
  // record and most of its WAL writes (bench/README.md).
  `drop index if exists submissions_hash;
   create index submissions_raw_hash on submissions (network, hash) where kind = 'raw';`,
  // Keys and Idempotency-Key answers.
  // Times are milliseconds, as in the journal.
  `create table api_keys (
     id text primary key,
     prefix text not null,
     key_hash text not null unique,
     label text not null default '',
     wallet_index integer not null unique,
     created_at integer not null,
     revoked_at integer,
     requests_per_minute integer,
     transactions_per_day integer
   );
   create table idempotency (
     scope text not null,
     key text not null,
     status integer,
     body text,
     created_at integer not null,
     primary key (scope, key)
   ) without rowid;
   create index idempotency_created on idempotency (created_at);`,
  // What the first request carried, so a reuse of its key with another payload is refused (422), not replayed.
  `alter table idempotency add column fingerprint text;`,
  // The only addresses a key's writes may go to (comma-separated, lowercase); null: any.
  `alter table api_keys add column allowed_targets text;`,
  // A key's own 30-day write quota (AdminService.SetKeyLimits); null: KEY_WRITES_PER_MONTH.
  `alter table api_keys add column writes_per_month integer;`,
  // Webhooks: a key's endpoints, and their deliveries: an outbox written in the same transaction as the
  // status change that caused each (sqliteSubmissionStore.ts), delivered in `seq` order per endpoint.
  // `events` is a comma list with commas around it (",transaction.completed,"), matched with instr.
  `create table webhooks (
     id text primary key,
     key_id text not null,
     network text not null,
     signer text not null,
     url text not null,
     events text not null,
     secret text not null,
     log_filter text,
     created_at integer not null,
     disabled_at integer,
     disabled_reason text,
     lease_owner text,
     lease_until integer
   );
   create index webhooks_signer on webhooks (signer) where disabled_at is null;
   create index webhooks_key on webhooks (key_id);
   create table webhook_deliveries (
     seq integer primary key autoincrement,
     id text not null unique,
     webhook_id text not null,
     event text not null,
     queue_id text,
     error_message text,
     payload text,
     dedupe text,
     url text,
     created_at integer not null,
     status text not null default 'pending',
     attempts integer not null default 0,
     last_status integer,
     last_error text,
     delivered_at integer
   );
   create index webhook_deliveries_pending on webhook_deliveries (webhook_id, seq) where status = 'pending';
   create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, seq);
   create unique index webhook_deliveries_dedupe on webhook_deliveries (webhook_id, dedupe) where dedupe is not null;
   create table write_callbacks (queue_id text primary key, webhook_id text not null, url text not null) without rowid;
   create table write_abis (queue_id text primary key, abi text not null) without rowid;`,
  `alter table webhooks add column previous_secret text;
   alter table webhooks add column previous_until integer;
   create table callback_secrets (key_id text primary key, secret text not null, previous_secret text, previous_until integer) without rowid;`,
  `create table key_wallet_history (wallet_index integer primary key, key_id text not null, moved_at integer not null);
   create index key_wallet_history_key on key_wallet_history (key_id);`,
];

/** How long a statement waits for another process's write (the keys CLI's: a few milliseconds) before failing. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens (creating and migrating) the store's file under `dataDir`. Other processes may open it too (the keys
 * CLI, while the gateway runs): SQLite serialises their writes. That one gateway at a time writes the journal
 * is holdDataDir's job.
 */
export function openEmbeddedDatabase(dataDir: string): SqliteDatabase {
  mkdirSync(dataDir, { recursive: true });
  const db = openSqlite(join(dataDir, "journal.sqlite"), { busyTimeoutMs: BUSY_TIMEOUT_MS });
  db.exec("pragma journal_mode = WAL");
  // WAL: a commit is one append. synchronous=NORMAL: a commit is in the OS's hands before the reply, so a
  // killed process loses nothing; a crash of the machine may lose the last commits (DATABASE_URL is the
  // durable choice).
  db.exec("pragma synchronous = NORMAL");
  // Immediate: two processes opening a new file at once migrate it one after the other.
  transaction(
    db,
    () => {
      const version = pragma(db, "user_version") as number;
      for (let v = version; v < SCHEMA.length; v++) db.exec(SCHEMA[v]!);
      db.exec(`pragma user_version = ${SCHEMA.length}`);
    },
    "immediate",
  )();
  return db;
}

/**
 * Claims `dataDir` for this process until the returned release is called: a second gateway on it would hand
 * out the same nonces (each keeps its lanes' next nonces in memory), so it is refused. The claim is an
 * exclusive lock on DATA_DIR/gateway.lock (SQLite's own file locking, held by the open connection), so it
 * goes with the process however that ends.
 */
export function holdDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "gateway.lock");
  const lock = openSqlite(file, { busyTimeoutMs: 0 });
  try {
    // In exclusive locking mode the first write's lock is never given back while the connection is open.
    lock.exec("pragma locking_mode = EXCLUSIVE");
    // Its content does not matter: no rollback journal file beside it.
    lock.exec("pragma journal_mode = MEMORY");
    lock.exec("create table if not exists holder (pid integer); delete from holder;");
    lock.prepare("insert into holder (pid) values (?)").run(process.pid);
  } catch (err) {
    lock.close();
    if (!isBusy(err)) throw err;
    throw new Error(`the data directory ${dataDir} is in use by another gateway: one gateway per DATA_DIR at a time`, { cause: err });
  }
  return () => lock.close();
}
