// Versioned schema migrations, run on start, in order, each once. Replicas starting together serialise on
// an advisory lock. Never edit a shipped migration: add the next one.
import type { SqlClient } from "./sqlClient.js";

const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "api keys and submission journal",
    sql: `
      create table api_keys (
        id text primary key,
        prefix text not null,
        key_hash text not null unique,
        label text not null default '',
        wallet_index integer not null unique,
        created_at timestamptz not null default now(),
        revoked_at timestamptz,
        requests_per_minute integer,
        transactions_per_day integer
      );
      create index api_keys_prefix on api_keys (prefix);
      create sequence api_key_wallet_index start 1;

      create table submissions (
        queue_id text primary key,
        network text not null,
        signer text not null,
        nonce bigint not null,
        hash text not null,
        raw text not null,
        kind text not null,
        status text not null,
        error_message text,
        created_at timestamptz not null,
        processed_at timestamptz,
        idempotency_key text
      );
      create index submissions_status on submissions (network, status, created_at);
      create index submissions_lane on submissions (network, signer, nonce);
      create unique index submissions_idempotency on submissions (idempotency_key) where idempotency_key is not null;
    `,
  },
  {
    version: 2,
    name: "nonce lanes and idempotency",
    sql: `
      create table nonce_lanes (
        network text not null,
        signer text not null,
        next_nonce bigint not null,
        primary key (network, signer)
      );
      create table idempotency (
        scope text not null,
        key text not null,
        status integer,
        body text,
        created_at timestamptz not null default now(),
        primary key (scope, key)
      );
    `,
  },
  {
    version: 3,
    name: "submissions by hash",
    // A keyed eth_sendRawTransaction looks its hash up (a retry is answered from the journal); without an
    // index that was a scan of the whole journal per transaction.
    sql: `create index submissions_hash on submissions (network, hash)`,
  },
  {
    version: 4,
    name: "one nonce upsert per group commit",
    // A group commit reserves nonces for all its lanes in one statement; `reserved` carries each lane's count
    // into the upsert's conflict branch. The lane index served no hot query (recovery sorts what the status
    // index finds; the CLI's per-key count is occasional) and cost an index entry per row version.
    sql: `alter table nonce_lanes add column reserved bigint not null default 0;
          drop index submissions_lane`,
  },
  {
    version: 5,
    name: "hash index for caller-signed transactions only",
    // Only a keyed eth_sendRawTransaction looks a hash up. Every record's hash, random by nature, was an
    // index entry on a random page; the sequencer's own records now skip it.
    sql: `drop index if exists submissions_hash;
          create index submissions_raw_hash on submissions (network, hash) where kind = 'raw'`,
  },
  {
    version: 6,
    name: "idempotency payload fingerprint",
    // What the first request carried, so a reuse of its key with another payload is refused (422), not replayed.
    sql: `alter table idempotency add column fingerprint text`,
  },
  {
    version: 7,
    name: "journal facts: each network's pinned genesis",
    // The first genesis a network's journal saw: a start without a reachable node journals under it (never
    // under a placeholder), and a node on another genesis is never taken for this chain.
    sql: `create table journal_meta (key text primary key, value text not null)`,
  },
  {
    version: 8,
    name: "a key's allowed write targets",
    // The only addresses a key's writes may go to (comma-separated, lowercase); null: any.
    sql: `alter table api_keys add column allowed_targets text`,
  },
  {
    version: 9,
    name: "a key's own monthly write quota",
    // Set by an operator (AdminService.SetKeyLimits); null: KEY_WRITES_PER_MONTH.
    sql: `alter table api_keys add column writes_per_month integer`,
  },
  {
    version: 10,
    name: "webhooks and their delivery outbox",
    // A key's endpoints; deliveries written in the same statement as the status change that caused them
    // (sqlSubmissionStore.ts), delivered in seq order per endpoint by whichever replica leases the endpoint.
    sql: `create table webhooks (
       id text primary key,
       key_id text not null,
       network text not null,
       signer text not null,
       url text not null,
       events text not null,
       secret text not null,
       log_filter text,
       created_at timestamptz not null default now(),
       disabled_at timestamptz,
       disabled_reason text,
       lease_owner text,
       lease_until timestamptz
     );
     create index webhooks_signer on webhooks (signer) where disabled_at is null;
     create index webhooks_key on webhooks (key_id);
     create table webhook_deliveries (
       seq bigserial primary key,
       id text not null unique default gen_random_uuid()::text,
       webhook_id text not null,
       event text not null,
       queue_id text,
       error_message text,
       payload text,
       dedupe text,
       url text,
       created_at timestamptz not null default now(),
       status text not null default 'pending',
       attempts integer not null default 0,
       last_status integer,
       last_error text,
       delivered_at timestamptz
     );
     create index webhook_deliveries_pending on webhook_deliveries (webhook_id, seq) where status = 'pending';
     create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, seq);
     create unique index webhook_deliveries_dedupe on webhook_deliveries (webhook_id, dedupe) where dedupe is not null;
     create table write_callbacks (queue_id text primary key, webhook_id text not null, url text not null);
     create table write_abis (queue_id text primary key, abi text not null)`,
  },
  {
    version: 11,
    name: "rotated webhook and callback secrets",
    // The secret before the last rotation signs alongside the new one until previous_until; a key's callback
    // secret, once rotated, is its own random one (callback_secrets) instead of the derived one.
    sql: `alter table webhooks add column previous_secret text;
     alter table webhooks add column previous_until timestamptz;
     create table callback_secrets (key_id text primary key, secret text not null, previous_secret text, previous_until timestamptz)`,
  },
  {
    version: 12,
    name: "the wallets a key moved away from",
    // Kept for good: a journaled write of an old wallet is finished (or resent) by it, and no index is reused.
    sql: `create table key_wallet_history (wallet_index integer primary key, key_id text not null, moved_at timestamptz not null default now());
     create index key_wallet_history_key on key_wallet_history (key_id)`,
  },
];

export async function migrate(db: SqlClient): Promise<number[]> {
  return db.transaction(
    async (tx) => {
      await tx.query("select pg_advisory_xact_lock(727274)");
      await tx.query(
        "create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())",
      );
      const done = new Set((await tx.query<{ version: number }>("select version from schema_migrations")).map((r) => r.version));
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        for (const stmt of m.sql
          .split(";")
          .map((s) => s.trim())
          .filter(Boolean))
          await tx.query(stmt);
        await tx.query("insert into schema_migrations (version, name) values ($1, $2)", [m.version, m.name]);
        applied.push(m.version);
      }
      return applied;
    },
    { deadlineMs: 0 },
  );
}
