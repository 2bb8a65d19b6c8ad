// Work that one process at a time may do, among every process sharing a store: making a wallet in a PKCS#11
// token shared by replicas (find it, or make it when it is missing), which two replicas must not both do.
import type { SqlClient } from "./sqlClient.js";

/** Runs fn while no other process sharing the store runs one for `name`. */
export type Exclusive = <T>(name: string, fn: () => T | Promise<T>) => Promise<T>;

/** A key space of its own for these locks (the migrations' lock is a single bigint key). */
const LOCK_CLASS = 727_275;
/** A replica waits this long for another's turn (a token making a key pair: milliseconds). */
const WAIT_MS = 10_000;

/** PostgreSQL: a transaction-scoped advisory lock on the name's hash, released when fn ends. */
export function sqlExclusive(db: Pick<SqlClient, "transaction">): Exclusive {
  return (name, fn) =>
    db.transaction(
      async (tx) => {
        await tx.query("select pg_advisory_xact_lock($1, hashtext($2))", [LOCK_CLASS, name]);
        return fn();
      },
      { deadlineMs: WAIT_MS },
    );
}

/**
 * The embedded store: one gateway per data directory, and within it each wallet is made once (TokenWallets
 * keeps one making per index), so there is no other process to exclude.
 */
export function processExclusive(): Exclusive {
  return async (_name, fn) => fn();
}
