// The gateway's stores, for the gateway and the keys CLI alike: the submission journal, API keys and
// Idempotency-Key answers, all in PostgreSQL (DATABASE_URL: replicas share them) or all in the embedded
// SQLite file under DATA_DIR (one gateway; the keys CLI beside it).
import pRetry from "p-retry";
import { GatewayError } from "../errors.js";
import { holdDataDir, openEmbeddedDatabase } from "./embeddedDatabase.js";
import { type Exclusive, processExclusive, sqlExclusive } from "./exclusive.js";
import { sqlIdempotencyTable, sqliteIdempotencyTable, type IdempotencyTable } from "./idempotencyTable.js";
import { sqlKeyTable, sqliteKeyTable, type KeyTable } from "./keyTable.js";
import { migrate } from "./migrations.js";
import { openSqlClient } from "./sqlClient.js";
import { type SqliteDatabase, statement, watchFaults } from "./sqliteFile.js";
import { SqliteSubmissionStore } from "./sqliteSubmissionStore.js";
import { SqlSubmissionStore } from "./sqlSubmissionStore.js";
import { StoreHealth } from "./storeHealth.js";
import type { WebhookStore } from "./webhookStore.js";
import { sqlWebhookStore, sqliteWebhookStore } from "./webhookTables.js";

export interface Stores {
  kind: "embedded" | "postgres";
  /** Whether the store takes writes now (readiness). */
  health: StoreHealth;
  journal: SqliteSubmissionStore | SqlSubmissionStore;
  keys: KeyTable;
  idempotency: IdempotencyTable;
  webhooks: WebhookStore;
  /** Work one process at a time may do among all sharing this store (making a shared token's wallets). */
  exclusive: Exclusive;
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
  /** false: a PostgreSQL that does not answer fails the open (the keys CLI); by default it is waited for. */
  waitForDatabase?: boolean;
  /** Told each time PostgreSQL is waited for at start. */
  onWait?: (what: string, details: Record<string, unknown>) => void;
  /** Told when the store goes away or comes back while open. */
  onAvailability?: (available: boolean, reason?: string) => void;
}

export async function openStores(options: OpenStoresOptions): Promise<Stores> {
  if (options.databaseUrl) {
    const db = await openSqlClient({
      databaseUrl: options.databaseUrl,
      onAvailability: (available, reason) => options.onAvailability?.(available, reason),
    });
    try {
      // A database that is not there yet is waited for (a replica started before PostgreSQL, or during its
      // restart), not a reason to exit; any other failure (a migration's) is.
      const applied = await pRetry(() => migrate(db), {
        retries: options.waitForDatabase === false ? 0 : Number.POSITIVE_INFINITY,
        minTimeout: 500,
        maxTimeout: 5_000,
        shouldRetry: ({ error }) => error instanceof GatewayError && error.kind === "upstream_unavailable",
        onFailedAttempt: ({ error, attemptNumber }) => {
          if (error instanceof GatewayError && error.kind === "upstream_unavailable")
            options.onWait?.("waiting for PostgreSQL", { attempt: attemptNumber, error: error.message });
        },
      });
      if (applied.length > 0) options.onChange?.("store migrated", { store: "postgres", versions: applied });
    } catch (err) {
      await db.close();
      throw err;
    }
    const journal = new SqlSubmissionStore(db);
    return {
      kind: "postgres",
      health: db.health,
      journal,
      keys: sqlKeyTable(db),
      idempotency: sqlIdempotencyTable(db),
      webhooks: sqlWebhookStore(db),
      exclusive: sqlExclusive(db),
      async close() {
        await journal.close();
        await db.close();
      },
    };
  }
  const release = options.role === "tool" ? undefined : holdDataDir(options.dataDir);
  let journal: SqliteSubmissionStore | undefined;
  let db: SqliteDatabase | undefined;
  let health: StoreHealth | undefined;
  try {
    db = openEmbeddedDatabase(options.dataDir);
    const file = db;
    // On a full disk a write fails; the probe is a write too, so readiness returns only once one fits.
    const probe = statement<[string]>(file, "insert or replace into journal_meta (key, value) values ('probe', ?)");
    health = new StoreHealth(async () => probe.run(new Date().toISOString()), options.onAvailability);
    watchFaults(file, health);
    journal = new SqliteSubmissionStore(db);
    // One gateway per file: leases of webhook endpoints left by a process that ended are void now.
    if (release) statement<[], never>(file, "update webhooks set lease_owner = null, lease_until = null where lease_owner is not null").run();
  } catch (err) {
    if (journal) await journal.close();
    else db?.close();
    release?.();
    throw err;
  }
  const embeddedHealth = health!;
  return {
    kind: "embedded",
    health: embeddedHealth,
    journal,
    keys: sqliteKeyTable(db),
    idempotency: sqliteIdempotencyTable(db),
    // One writer of the file: the journal writes outbox rows only while a webhook exists.
    webhooks: sqliteWebhookStore(db, () => journal!.refreshWebhooks()),
    exclusive: processExclusive(),
    async close() {
      // The journal closes the file it shares with the keys and answers.
      embeddedHealth.close();
      await journal.close();
      release?.();
    },
  };
}
