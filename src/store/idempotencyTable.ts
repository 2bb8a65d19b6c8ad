// Where Idempotency-Key claims and answers are kept: PostgreSQL (DATABASE_URL) or the embedded SQLite file.
// IdempotencyStore holds the rules (who runs, who waits, what is kept); this holds only the rows.
import { type SqliteDatabase, statement, transaction } from "./sqliteFile.js";
import type { SqlClient } from "./sqlClient.js";

export interface ClaimRow {
  status: number | null;
  body: string | null;
  /** Compared and carried at millisecond precision (PostgreSQL keeps microseconds). */
  createdAt: Date;
  /** Digest of the first request's payload (null for claims made before it was kept). */
  fingerprint: string | null;
}

export interface IdempotencyTable {
  /** Takes the claim unless one exists; one older than `expiredBefore` is dropped first. The claim's time, or undefined when it was taken already. */
  claim(scope: string, key: string, expiredBefore: Date, fingerprint: string): Promise<Date | undefined>;
  read(scope: string, key: string): Promise<ClaimRow | undefined>;
  /** Stores the answer; with `onlyUnanswered`, only if no answer is stored yet. */
  answer(scope: string, key: string, status: number, body: string, onlyUnanswered?: boolean): Promise<void>;
  /** Drops the claim; with `claimedAt`, only that claim and only while it has no answer. */
  release(scope: string, key: string, claimedAt?: Date): Promise<void>;
  /** Drops every claim made before `before`; how many went. */
  prune(before: Date): Promise<number>;
}

export function sqlIdempotencyTable(db: Pick<SqlClient, "query">): IdempotencyTable {
  return {
    async claim(scope, key, expiredBefore, fingerprint) {
      await db.query("delete from idempotency where scope = $1 and key = $2 and created_at < $3", [scope, key, expiredBefore]);
      const [row] = await db.query<{ created_at: Date }>(
        "insert into idempotency (scope, key, fingerprint) values ($1, $2, $3) on conflict do nothing returning created_at",
        [scope, key, fingerprint],
      );
      return row?.created_at;
    },
    async read(scope, key) {
      const [row] = await db.query<{ status: number | null; body: string | null; created_at: Date; fingerprint: string | null }>(
        "select status, body, created_at, fingerprint from idempotency where scope = $1 and key = $2",
        [scope, key],
      );
      return row ? { status: row.status, body: row.body, createdAt: row.created_at, fingerprint: row.fingerprint } : undefined;
    },
    async answer(scope, key, status, body, onlyUnanswered = false) {
      await db.query(`update idempotency set status = $3, body = $4 where scope = $1 and key = $2${onlyUnanswered ? " and status is null" : ""}`, [
        scope,
        key,
        status,
        body,
      ]);
    },
    async release(scope, key, claimedAt) {
      if (!claimedAt) await db.query("delete from idempotency where scope = $1 and key = $2", [scope, key]);
      else
        await db.query("delete from idempotency where scope = $1 and key = $2 and status is null and date_trunc('milliseconds', created_at) = $3", [
          scope,
          key,
          claimedAt,
        ]);
    },
    prune: async (before) => (await db.query("delete from idempotency where created_at < $1 returning key", [before])).length,
  };
}

export function sqliteIdempotencyTable(db: SqliteDatabase): IdempotencyTable {
  const sql = {
    expire: statement<[string, string, number], never>(db, "delete from idempotency where scope = ? and key = ? and created_at < ?"),
    claim: statement<[string, string, number, string], { created_at: number }>(
      db,
      "insert into idempotency (scope, key, created_at, fingerprint) values (?, ?, ?, ?) on conflict do nothing returning created_at",
    ),
    read: statement<[string, string], { status: number | null; body: string | null; created_at: number; fingerprint: string | null }>(
      db,
      "select status, body, created_at, fingerprint from idempotency where scope = ? and key = ?",
    ),
    answer: statement<[number, string, string, string], never>(db, "update idempotency set status = ?, body = ? where scope = ? and key = ?"),
    answerUnanswered: statement<[number, string, string, string], never>(
      db,
      "update idempotency set status = ?, body = ? where scope = ? and key = ? and status is null",
    ),
    release: statement<[string, string], never>(db, "delete from idempotency where scope = ? and key = ?"),
    releaseClaim: statement<[string, string, number], never>(db, "delete from idempotency where scope = ? and key = ? and status is null and created_at = ?"),
    prune: statement<[number], never>(db, "delete from idempotency where created_at < ?"),
  };
  // Expiry and claim in one transaction, as PostgreSQL's two statements are atomic enough there (a unique key).
  const claim = transaction(db, (scope: string, key: string, expiredBefore: number, fingerprint: string): number | undefined => {
    sql.expire.run(scope, key, expiredBefore);
    return sql.claim.get(scope, key, Date.now(), fingerprint)?.created_at;
  });
  return {
    async claim(scope, key, expiredBefore, fingerprint) {
      const at = claim(scope, key, expiredBefore.getTime(), fingerprint);
      return at === undefined ? undefined : new Date(at);
    },
    async read(scope, key) {
      const row = sql.read.get(scope, key);
      return row ? { status: row.status, body: row.body, createdAt: new Date(row.created_at), fingerprint: row.fingerprint } : undefined;
    },
    async answer(scope, key, status, body, onlyUnanswered = false) {
      (onlyUnanswered ? sql.answerUnanswered : sql.answer).run(status, body, scope, key);
    },
    async release(scope, key, claimedAt) {
      if (!claimedAt) sql.release.run(scope, key);
      else sql.releaseClaim.run(scope, key, claimedAt.getTime());
    },
    prune: async (before) => sql.prune.run(before.getTime()).changes,
  };
}
