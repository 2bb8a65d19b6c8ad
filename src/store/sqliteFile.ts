// node:sqlite (built into Node 24: nothing to compile on install) with the two things the stores want on top:
// statements typed by their parameters and rows, and transactions as plain functions.
import { DatabaseSync } from "node:sqlite";

export type SqliteDatabase = DatabaseSync;

/** A prepared statement; parameters are positional (`?`) or one object for `@name`s. */
export interface Statement<P extends unknown[], R> {
  /** `changes` is a number: no statement here asks for BigInts, and no table holds 2^53 rows. */
  run(...params: P): { changes: number };
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

export function openSqlite(file: string, options: { busyTimeoutMs: number }): SqliteDatabase {
  return new DatabaseSync(file, { timeout: options.busyTimeoutMs });
}

export function statement<P extends unknown[], R = never>(db: SqliteDatabase, text: string): Statement<P, R> {
  // node:sqlite's own types say "any SQL value in, a record of SQL values out"; the caller's SQL says which.
  return db.prepare(text) as unknown as Statement<P, R>;
}

/** A pragma's value (`journal_mode`, `user_version`...). */
export function pragma(db: SqliteDatabase, name: string): unknown {
  const row = db.prepare(`pragma ${name}`).get();
  return row ? Object.values(row)[0] : undefined;
}

/**
 * `fn` as one transaction: committed when it returns, rolled back when it throws. "immediate" takes the write
 * lock at the start, so two processes migrating one new file run one after the other rather than failing.
 */
export function transaction<A extends unknown[], T>(db: SqliteDatabase, fn: (...args: A) => T, mode: "deferred" | "immediate" = "deferred"): (...args: A) => T {
  const begin = db.prepare(mode === "immediate" ? "begin immediate" : "begin");
  const commit = db.prepare("commit");
  const rollback = db.prepare("rollback");
  return (...args) => {
    begin.run();
    try {
      const result = fn(...args);
      commit.run();
      return result;
    } catch (err) {
      if (db.isTransaction) rollback.run();
      throw err;
    }
  };
}

/** SQLite's "database is locked" (SQLITE_BUSY), as node:sqlite reports it. */
export function isBusy(err: unknown): boolean {
  return (err as { errcode?: number }).errcode === 5;
}
