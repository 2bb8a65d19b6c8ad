// One small SQL interface over PGlite (embedded PostgreSQL under the data directory, the default) and
// PostgreSQL (DATABASE_URL): the same SQL, the same migrations, either way.
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export interface SqlClient {
  query<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn in one transaction on one connection. */
  transaction<T>(fn: (tx: Pick<SqlClient, "query">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly kind: "pglite" | "postgres";
}

export async function openSqlClient(options: { databaseUrl?: string; dataDir: string }): Promise<SqlClient> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(join(options.dataDir, "pglite"));
}

async function openPglite(dir: string): Promise<SqlClient> {
  const { PGlite } = await import("@electric-sql/pglite");
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const query = async <T extends object>(sql: string, params: unknown[] = []): Promise<T[]> => (await db.query<T>(sql, params)).rows;
  return {
    kind: "pglite",
    query,
    transaction: (fn) => db.transaction((tx) => fn({ query: async <T extends object>(sql: string, params: unknown[] = []) => (await tx.query<T>(sql, params)).rows })),
    close: () => db.close(),
  };
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
