// The embedded store: one SQLite file under DATA_DIR (better-sqlite3, in this process) holding the submission
// journal, API keys and Idempotency-Key answers. It is called journal.sqlite because it held only the journal
// at first; the keys joined it from PGlite, whose ~260 MB of resident memory was most of an idle gateway's.
// With DATABASE_URL, PostgreSQL holds the same data instead (migrations.ts).
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

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
  // Keys and Idempotency-Key answers, which PGlite held until here (pgliteTakeover.ts copies them over).
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
];

/**
 * Opens (creating and migrating) the store's file under `dataDir`, exclusively: one gateway (or keys CLI) per
 * data directory, since a second writer would hand out the same nonces and wallet indexes.
 */
export function openEmbeddedDatabase(dataDir: string): Database.Database {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "journal.sqlite");
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
  return db;
}
