// One small SQL interface over PostgreSQL (DATABASE_URL): the shared store of replicas (the embedded store is
// SQLite: embeddedDatabase.ts). A database outage is a 503, never a crash: every connection, pooled or checked
// out, has an 'error' listener (node-postgres emits a lost connection as an event, and an unheard 'error'
// event ends the process), and outage errors are turned into GatewayErrors here, once (storeHealth.ts).
//
// A path that freezes (packets held, nothing reset) is an outage too: node-postgres waits for ever by default,
// and writes hung 20 s while /readyz said ready. Every statement has a deadline, on the client (the connection
// is then destroyed: its answer can no longer be matched) and on the server (statement_timeout); and when no
// statement has answered for STALL_MS while one waits, the store is down at once — readiness false, new calls
// refused — until a probe gets through.
import type { PoolClient } from "pg";
import { monotonicNow } from "../clock.js";
import { StoreHealth } from "./storeHealth.js";

export interface SqlClient {
  query<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn in one transaction on one connection; `deadlineMs: 0` lifts the statement deadline (migrations). */
  transaction<T>(fn: (tx: Pick<SqlClient, "query">) => Promise<T>, options?: { deadlineMs?: number }): Promise<T>;
  close(): Promise<void>;
  readonly kind: "postgres";
  /** Whether the database answers; false from an outage until a probe gets through. */
  readonly health: StoreHealth;
}

export interface SqlClientOptions {
  databaseUrl: string;
  /** A statement not answered within this fails as an outage (503); default 2,500 ms. */
  deadlineMs?: number;
  /** Told when the database goes away or comes back. */
  onAvailability?: (available: boolean, reason?: string) => void;
}

/** Default statement deadline: well past a loaded journal's slowest statement, inside a caller's patience. */
export const STORE_DEADLINE_MS = 2_500;
/** No answer to any statement for this long, with one waiting: the path is frozen. */
const STALL_MS = 1_500;

/** What node-postgres says when query_timeout fires. */
const READ_TIMEOUT = /Query read timeout/;

export async function openSqlClient(options: SqlClientOptions): Promise<SqlClient> {
  const { default: pg } = await import("pg");
  const deadlineMs = options.deadlineMs ?? STORE_DEADLINE_MS;
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 10,
    connectionTimeoutMillis: deadlineMs,
    // Server side too, a little later than the client's: the server stops work nobody waits for.
    statement_timeout: deadlineMs + 500,
  });
  // A dropped idle connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  const timed = (sql: string, params: unknown[], ms: number) => (ms > 0 ? { text: sql, values: params, query_timeout: ms } : { text: sql, values: params });
  const health = new StoreHealth(() => pool.query(timed("select 1", [], deadlineMs)), options.onAvailability);

  // Stall watch: statements waiting (their start), and when any statement last answered.
  const waiting = new Set<{ at: number }>();
  let answeredAt = monotonicNow();
  const watch = setInterval(() => {
    const now = monotonicNow();
    if (!health.available || now - answeredAt < STALL_MS) return;
    for (const w of waiting)
      if (now - w.at >= STALL_MS) {
        health.stalled(`no answer from PostgreSQL for ${Math.round((now - answeredAt) / 100) / 10} s`);
        return;
      }
  }, 250);
  watch.unref();

  const attempt = async <T>(run: () => Promise<T>): Promise<T> => {
    // Down: refused at once (a probe brings it back), not each caller waiting out its own deadline.
    if (!health.available) throw health.refusal();
    const w = { at: monotonicNow() };
    waiting.add(w);
    try {
      const out = await run();
      answeredAt = monotonicNow();
      health.ok();
      return out;
    } catch (err) {
      if (!READ_TIMEOUT.test((err as Error).message ?? "")) answeredAt = monotonicNow();
      throw health.fault(err);
    } finally {
      waiting.delete(w);
    }
  };
  const queryOn =
    (conn: Pick<PoolClient, "query">, ms: number) =>
    async <T extends object>(sql: string, params: unknown[] = []): Promise<T[]> =>
      (await conn.query(timed(sql, params, ms))).rows as T[];
  return {
    kind: "postgres",
    health,
    query: (sql, params) => attempt(() => queryOn(pool, deadlineMs)(sql, params)),
    transaction: (fn, txOptions = {}) =>
      attempt(async () => {
        const ms = txOptions.deadlineMs ?? deadlineMs;
        const conn = await pool.connect();
        // Checked out, a connection is no longer heard by the pool: a reset mid-transaction would be an
        // unhandled 'error' event that ends the process. The query in flight fails on its own; the connection is dropped.
        let lost: Error | undefined;
        const onError = (err: Error): void => {
          lost = err;
        };
        conn.on("error", onError);
        let committing = false;
        try {
          await conn.query(timed("begin", [], ms));
          if (ms === 0) await conn.query("set local statement_timeout = 0");
          const out = await fn({ query: queryOn(conn, ms) });
          committing = true;
          await conn.query(timed("commit", [], ms));
          return out;
        } catch (err) {
          // A statement past its deadline still holds the connection: no rollback can pass it. Destroying the
          // connection rolls back whatever was not committed; a commit already sent may have landed (said so).
          if (READ_TIMEOUT.test((err as Error).message ?? "")) {
            lost ??= err as Error;
            if (committing) throw Object.assign(err as Error, { commitUnknown: true });
          } else await conn.query(timed("rollback", [], ms)).catch(() => undefined);
          throw err;
        } finally {
          conn.off("error", onError);
          // A connection that saw an error is destroyed, not returned to the pool.
          conn.release(lost ?? false);
        }
      }),
    close: async () => {
      clearInterval(watch);
      health.close();
      await pool.end();
    },
  };
}
