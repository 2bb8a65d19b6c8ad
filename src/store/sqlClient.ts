// One small SQL interface over PostgreSQL (DATABASE_URL): the shared store of replicas (the embedded store is
// SQLite: embeddedDatabase.ts).

export interface SqlClient {
  query<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn in one transaction on one connection. */
  transaction<T>(fn: (tx: Pick<SqlClient, "query">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly kind: "postgres";
}

export interface SqlClientOptions {
  databaseUrl: string;
}

export async function openSqlClient(options: SqlClientOptions): Promise<SqlClient> {
  return openPostgres(options.databaseUrl);
}

async function openPostgres(url: string): Promise<SqlClient> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // A dropped idle connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  await pool.query("select 1");
  return {
    kind: "postgres",
    query: async <T extends object>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[],
    async transaction(fn) {
      const conn = await pool.connect();
      try {
        await conn.query("begin");
        const out = await fn({ query: async <T extends object>(sql: string, params: unknown[] = []) => (await conn.query(sql, params)).rows as T[] });
        await conn.query("commit");
        return out;
      } catch (err) {
        await conn.query("rollback").catch(() => undefined);
        throw err;
      } finally {
        conn.release();
      }
    },
    close: () => pool.end(),
  };
}
