// The gateway's stores, for the gateway and the keys CLI alike: the submission journal, API keys and
// Idempotency-Key answers, all in PostgreSQL (DATABASE_URL: replicas share them) or all in the embedded
// SQLite file under DATA_DIR (one gateway; the keys CLI beside it).
import { holdDataDir, openEmbeddedDatabase } from "./embeddedDatabase.js";
import { sqlIdempotencyTable, sqliteIdempotencyTable, type IdempotencyTable } from "./idempotencyTable.js";
import { sqlKeyTable, sqliteKeyTable, type KeyTable } from "./keyTable.js";
import { migrate } from "./migrations.js";
import { openSqlClient } from "./sqlClient.js";
import type { SqliteDatabase } from "./sqliteFile.js";
import { SqliteSubmissionStore } from "./sqliteSubmissionStore.js";
import { SqlSubmissionStore } from "./sqlSubmissionStore.js";

export interface Stores {
  kind: "embedded" | "postgres";
  journal: SqliteSubmissionStore | SqlSubmissionStore;
  keys: KeyTable;
  idempotency: IdempotencyTable;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Told what opening changed: migrations applied. */
  onChange?: (what: string, details: Record<string, unknown>) => void;
  /**
   * "gateway" (the default) holds an embedded data directory for as long as the stores are open: one gateway
   * per DATA_DIR. "tool" (the keys CLI) works beside a running gateway, as it does on PostgreSQL.
   */
  role?: "gateway" | "tool";
}

export async function openStores(options: OpenStoresOptions): Promise<Stores> {
  if (options.databaseUrl) {
    const db = await openSqlClient({ databaseUrl: options.databaseUrl });
    try {
      const applied = await migrate(db);
      if (applied.length > 0) options.onChange?.("store migrated", { store: "postgres", versions: applied });
    } catch (err) {
      await db.close();
      throw err;
    }
    const journal = new SqlSubmissionStore(db);
    return {
      kind: "postgres",
      journal,
      keys: sqlKeyTable(db),
      idempotency: sqlIdempotencyTable(db),
      async close() {
        await journal.close();
        await db.close();
      },
    };
  }
  const release = options.role === "tool" ? undefined : holdDataDir(options.dataDir);
  let journal: SqliteSubmissionStore | undefined;
  let db: SqliteDatabase | undefined;
  try {
    db = openEmbeddedDatabase(options.dataDir);
    journal = new SqliteSubmissionStore(db);
  } catch (err) {
    if (journal) await journal.close();
    else db?.close();
    release?.();
    throw err;
  }
  return {
    kind: "embedded",
    journal,
    keys: sqliteKeyTable(db),
    idempotency: sqliteIdempotencyTable(db),
    async close() {
      // The journal closes the file it shares with the keys and answers.
      await journal.close();
      release?.();
    },
  };
}
