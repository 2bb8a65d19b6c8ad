// One small SQL interface over PostgreSQL (DATABASE_URL) and PGlite (PostgreSQL in WebAssembly: the embedded
// store of earlier versions, under DATA_DIR/pglite, which pgliteTakeover.ts reads once): the same SQL, the
// same migrations, either way.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

export interface SqlClient {
  query<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs fn in one transaction on one connection. */
  transaction<T>(fn: (tx: Pick<SqlClient, "query">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly kind: "pglite" | "postgres";
}

export interface SqlClientOptions {
  databaseUrl?: string;
  dataDir: string;
  /** The PGlite worker script; tests substitute one that can be made to crash. */
  pgliteWorker?: URL;
}

export async function openSqlClient(options: SqlClientOptions): Promise<SqlClient> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(join(options.dataDir, "pglite"), options);
}

/** Opens an existing PGlite store only: nothing creates one any more (the embedded store is SQLite). */
async function openPglite(dir: string, options: SqlClientOptions): Promise<SqlClient> {
  if (!existsSync(join(dir, "PG_VERSION"))) throw new Error(`no PGlite store in ${dir}`);
  // The take-over reads little; PostgreSQL's default 128 MB of shared buffers would only cost memory.
  const worker = new Worker(options.pgliteWorker ?? new URL("./pgliteWorker.mjs", import.meta.url), { workerData: { dir, postgresqlconf: ["shared_buffers=16MB"] } });
  const waiting = new Map<number, { resolve: (m: WorkerReply) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let failed: Error | undefined;
  await new Promise<void>((resolve, reject) => {
    worker.once("error", reject);
    worker.on("message", (m: WorkerReply | { ready: true }) => {
      if ("ready" in m) {
        worker.unref();
        return resolve();
      }
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (waiting.size === 0) worker.unref();
      if (!w) return;
      if (m.error) w.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else w.resolve(m);
    });
  });
  // A dead worker (an abort or out-of-memory in the WebAssembly) fails what waits and all later calls, rather
  // than leaving them hanging: its open transactions and the outcome of its last statement are gone.
  const die = (cause: Error): void => {
    if (failed) return;
    failed = new Error(`the PGlite store stopped: ${cause.message}`);
    for (const w of waiting.values()) w.reject(failed);
    waiting.clear();
  };
  worker.on("error", die);
  worker.on("exit", (code) => die(new Error(`its worker thread exited with code ${code}`)));
  const call = (msg: Record<string, unknown>): Promise<WorkerReply> =>
    failed
      ? Promise.reject(failed)
      : new Promise((resolve, reject) => {
          const id = nextId++;
          // The worker keeps the process alive only while a call waits on it (the CLI exits when done).
          if (waiting.size === 0) worker.ref();
          waiting.set(id, { resolve, reject });
          worker.postMessage({ ...msg, id });
        });
  const query = async <T extends object>(sql: string, params: unknown[] = [], tx?: number): Promise<T[]> => (await call({ op: "query", sql, params, tx })).rows as T[];
  return {
    kind: "pglite",
    query: (sql, params) => query(sql, params),
    async transaction(fn) {
      const { tx } = await call({ op: "begin" });
      let out;
      try {
        out = await fn({ query: (sql, params) => query(sql, params, tx) });
      } catch (err) {
        await call({ op: "rollback", tx }).catch(() => undefined);
        throw err;
      }
      await call({ op: "commit", tx });
      return out;
    },
    async close() {
      await call({ op: "close" }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

interface WorkerReply {
  id: number;
  rows?: object[];
  tx?: number;
  error?: { message: string; code?: string };
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
