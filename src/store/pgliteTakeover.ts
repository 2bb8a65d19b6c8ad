// Upgrading a data directory from the versions that kept their store in PGlite (DATA_DIR/pglite): its
// journal, keys and Idempotency-Key answers are copied into the SQLite file once, so an upgrade loses no
// accepted write and no key. Each part is noted as done in journal_meta when it commits; cut off part way,
// the next start copies it again (the copies skip what is there), and a part done is never redone.
import type Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "./migrations.js";
import { openSqlClient, type SqlClient } from "./sqlClient.js";
import type { SqliteSubmissionStore } from "./sqliteSubmissionStore.js";

/** The parts, by their journal_meta key (the journal's was written by the version that moved it alone). */
const JOURNAL = "pglite_takeover";
const KEYS = "pglite_keys_takeover";

const isDone = (db: Database.Database, part: string): boolean => db.prepare("select 1 from journal_meta where key = ?").get(part) !== undefined;

/** Whether `dataDir` holds a PGlite store this file has not taken over yet. */
export function pgliteToTakeOver(db: Database.Database, dataDir: string): boolean {
  return existsSync(join(dataDir, "pglite", "PG_VERSION")) && !(isDone(db, JOURNAL) && isDone(db, KEYS));
}

/**
 * Copies what `dataDir`'s PGlite store holds and this file (`db`, whose journal is `journal`) does not; true
 * if there was anything to do.
 */
export async function takeOverPglite(db: Database.Database, journal: SqliteSubmissionStore, dataDir: string): Promise<boolean> {
  if (!pgliteToTakeOver(db, dataDir)) return false;
  const cannot = (err: unknown): Error =>
    new Error(`cannot read the earlier embedded store in ${join(dataDir, "pglite")} to take it over (${err instanceof Error ? err.message : String(err)}); its keys and journal are not in the new store yet, so the gateway does not start without them: repair or restore that directory`, { cause: err });
  const old = await openSqlClient({ dataDir }).catch((err: unknown) => Promise.reject(cannot(err)));
  try {
    await migrate(old).catch((err: unknown) => Promise.reject(cannot(err)));
    if (!isDone(db, JOURNAL)) await copyJournal(db, journal, old);
    if (!isDone(db, KEYS)) await copyKeys(db, old);
  } finally {
    await old.close();
  }
  return true;
}

const markDone = (db: Database.Database, part: string): void => void db.prepare("insert into journal_meta (key, value) values (?, ?)").run(part, new Date().toISOString());

/** The journal (records, then nonce lanes); then the old journal is emptied: one journal from now on. */
async function copyJournal(db: Database.Database, journal: SqliteSubmissionStore, old: SqlClient): Promise<void> {
  await journal.copyFrom(old, () => markDone(db, JOURNAL));
  await old.transaction(async (tx) => {
    await tx.query("delete from submissions");
    await tx.query("delete from nonce_lanes");
  });
}

/** Keys (revoked ones too: their wallets' journaled writes still finish) and Idempotency-Key claims, in one commit. */
async function copyKeys(db: Database.Database, old: SqlClient): Promise<void> {
  const keys = await old.query<{
    id: string;
    prefix: string;
    key_hash: string;
    label: string;
    wallet_index: number;
    created_at: Date;
    revoked_at: Date | null;
    requests_per_minute: number | null;
    transactions_per_day: number | null;
  }>("select * from api_keys");
  const claims = await old.query<{ scope: string; key: string; status: number | null; body: string | null; created_at: Date }>("select scope, key, status, body, created_at from idempotency");
  const insertKey = db.prepare(
    `insert or ignore into api_keys (id, prefix, key_hash, label, wallet_index, created_at, revoked_at, requests_per_minute, transactions_per_day)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertClaim = db.prepare("insert or ignore into idempotency (scope, key, status, body, created_at) values (?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (const k of keys) insertKey.run(k.id, k.prefix, k.key_hash, k.label, k.wallet_index, k.created_at.getTime(), k.revoked_at?.getTime() ?? null, k.requests_per_minute, k.transactions_per_day);
    for (const c of claims) insertClaim.run(c.scope, c.key, c.status, c.body, c.created_at.getTime());
    markDone(db, KEYS);
  })();
}
