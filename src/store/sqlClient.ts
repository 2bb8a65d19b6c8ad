// One small SQL interface over PGlite (embedded PostgreSQL under the data directory, the default) and
// PostgreSQL (DATABASE_URL): the same SQL, the same migrations, either way.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { GatewayError } from "../errors.js";
import { createCluster, discardTemplate } from "./pgliteTemplate.js";

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
  /**
   * Called once if the embedded store's (PGlite's) worker thread dies. Its in-memory state (open transactions, the
   * outcome of the statement it was running) is gone, so every call fails from then on; a restart recovers the
   * journal from disk. PostgreSQL has no such state here: its pool reconnects by itself.
   */
  onFatal?: (err: Error) => void;
  /** The PGlite worker script; tests substitute one that can be made to crash. */
  pgliteWorker?: URL;
  /** Where a pristine PGlite cluster is kept for new data directories (pgliteTemplate.ts); tests isolate it. */
  templateCacheRoot?: string;
}

export async function openSqlClient(options: SqlClientOptions): Promise<SqlClient> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(join(options.dataDir, "pglite"), options);
}

async function openPglite(dir: string, options: SqlClientOptions): Promise<SqlClient> {
  mkdirSync(dir, { recursive: true });
  const created = existsSync(join(dir, "PG_VERSION")) ? undefined : await createCluster(dir, initInWorker, options.templateCacheRoot);
  try {
    return await startPglite(dir, options);
  } catch (err) {
    // A copy PGlite cannot open means a damaged template: it goes, and this directory gets its own initdb.
    if (created !== "copied") throw err;
    discardTemplate(options.templateCacheRoot);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await initInWorker(dir);
    return startPglite(dir, options);
  }
}

async function startPglite(dir: string, options: SqlClientOptions): Promise<SqlClient> {
  // The journal's working set is small; PostgreSQL's default 128 MB of shared buffers only costs memory here
  // (measured: the same insert throughput at 16 MB, ~140 MB less RSS).
  const worker = new Worker(options.pgliteWorker ?? new URL("./pgliteWorker.mjs", import.meta.url), { workerData: { dir, postgresqlconf: ["shared_buffers=16MB"] } });
  const waiting = new Map<number, { resolve: (m: WorkerReply) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let failed: Error | undefined;
  let closing = false;
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
  // A dead worker fails what waits and all later calls, rather than leaving them hanging, and tells the owner.
  const die = (cause: Error): void => {
    if (failed) return;
    // Callers see this message as is: a write in progress may have been journaled (and then be broadcast when
    // the gateway restarts) or not, and the client must not take the error for a refusal.
    failed = new GatewayError("internal", "the gateway's store stopped during this request, so a write may or may not have been accepted: check before sending it again (the gateway is stopping)", {
      cause: new Error(`the embedded store stopped: ${cause.message}`),
    });
    for (const w of waiting.values()) w.reject(failed);
    waiting.clear();
    if (!closing) options.onFatal?.(failed);
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
      closing = true;
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

/** initdb off the main thread, so its memory is released when it is done (see pgliteInitWorker.mjs). */
function initInWorker(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./pgliteInitWorker.mjs", import.meta.url), { workerData: { dir } });
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`PGlite initdb worker exited with ${code}`))));
  });
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
