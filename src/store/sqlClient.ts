// One small SQL interface over PostgreSQL (DATABASE_URL): the shared store of replicas (the embedded store is
// SQLite: embeddedDatabase.ts). A database outage is a 503, never a crash: every connection, pooled or checked
// out, has an 'error' listener (node-postgres emits a lost connection as an event, and an unheard 'error'
// event ends the process), and outage errors are turned into GatewayErrors here, once (storeHealth.ts).
import type { PoolClient } from "pg";
import { StoreHealth } from "./storeHealth.js";

export interface SqlClient {
  query<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn in one transaction on one connection. */
  transaction<T>(fn: (tx: Pick<SqlClient, "query">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly kind: "postgres";
  /** Whether the database answers; false from an outage until a probe gets through. */
  readonly health: StoreHealth;
}

export interface SqlClientOptions {
  databaseUrl: string;
  /** Told when the database goes away or comes back. */
  onAvailability?: (available: boolean, reason?: string) => void;
}

/** A connection that cannot be made within this is an outage (node-postgres waits for ever by default). */
const CONNECT_TIMEOUT_MS = 5_000;

export async function openSqlClient(options: SqlClientOptions): Promise<SqlClient> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A dropped idle connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  const health = new StoreHealth(() => pool.query("select 1"), options.onAvailability);
  const attempt = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      const out = await run();
      health.ok();
      return out;
    } catch (err) {
      throw health.fault(err);
    }
  };
  const queryOn =
    (conn: Pick<PoolClient, "query">) =>
    async <T extends object>(sql: string, params: unknown[] = []): Promise<T[]> =>
      (await conn.query(sql, params)).rows as T[];
  return {
    kind: "postgres",
    health,
    query: (sql, params) => attempt(() => queryOn(pool)(sql, params)),
    transaction: (fn) =>
      attempt(async () => {
        const conn = await pool.connect();
        // Checked out, a connection is no longer heard by the pool: a reset mid-transaction was an unhandled
        // 'error' event that ended the process. The query in flight fails on its own; the connection is dropped.
        let lost: Error | undefined;
        const onError = (err: Error): void => {
          lost = err;
        };
        conn.on("error", onError);
        try {
          await conn.query("begin");
          const out = await fn({ query: queryOn(conn) });
          await conn.query("commit");
          return out;
        } catch (err) {
          await conn.query("rollback").catch(() => undefined);
          throw err;
        } finally {
          conn.off("error", onError);
          // A connection that saw an error is destroyed, not returned to the pool.
          conn.release(lost ?? false);
        }
      }),
    close: async () => {
      health.close();
      await pool.end();
    },
  };
}
