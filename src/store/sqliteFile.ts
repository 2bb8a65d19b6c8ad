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

/** Told of each write's outcome on a database (storeHealth.ts): a full disk is an outage, not a bug. */
export interface FaultWatch {
  ok(): void;
  /** What to throw instead of `err`. */
  fault(err: unknown): unknown;
}
const watches = new WeakMap<SqliteDatabase, FaultWatch>();

/** Writes through statements prepared (and transactions begun) after this report to `watch`. */
export function watchFaults(db: SqliteDatabase, watch: FaultWatch): void {
  watches.set(db, watch);
}

export function statement<P extends unknown[], R = never>(db: SqliteDatabase, text: string): Statement<P, R> {
  // node:sqlite's own types say "any SQL value in, a record of SQL values out"; the caller's SQL says which.
  const s = db.prepare(text) as unknown as Statement<P, R>;
  const watch = watches.get(db);
  if (!watch) return s;
  const run = s.run.bind(s);
  s.run = (...params: P) => {
    try {
      const out = run(...params);
      watch.ok();
      return out;
    } catch (err) {
      throw watch.fault(err);
    }
  };
  return s;
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
  const watch = watches.get(db);
  return (...args) => {
    try {
      begin.run();
      const result = fn(...args);
      commit.run();
      watch?.ok();
      return result;
    } catch (err) {
      if (db.isTransaction) rollback.run();
      throw watch ? watch.fault(err) : err;
    }
  };
}

/** SQLite's "database is locked" (SQLITE_BUSY), as node:sqlite reports it. */
export function isBusy(err: unknown): boolean {
  return (err as { errcode?: number }).errcode === 5;
}
