// The webhook tables (webhookStore.ts) in each database's own SQL: PostgreSQL (replicas share the endpoints and
// lease them) and the embedded SQLite file (one gateway). Times: timestamptz there, milliseconds here.
import { type SqliteDatabase, statement, transaction } from "./sqliteFile.js";
import type { SqlClient } from "./sqlClient.js";
import type { DeliveryRow, DeliveryStatus, WebhookRow, WebhookStore } from "./webhookStore.js";

interface HookRow {
  id: string;
  key_id: string;
  network: string;
  signer: string;
  url: string;
  events: string;
  secret: string;
  log_filter: string | null;
  previous_secret: string | null;
  previous_until: Date | number | null;
  created_at: Date | number;
  disabled_at: Date | number | null;
  disabled_reason: string | null;
}

interface DeliveryDbRow {
  seq: number | string;
  id: string;
  webhook_id: string;
  event: string;
  queue_id: string | null;
  error_message: string | null;
  payload: string | null;
  url: string | null;
  created_at: Date | number;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Date | number | null;
}

/** Finished deliveries are deleted this many at a time. */
const PRUNE_SLICE = 1_000;

/** Events as stored: a comma list with commas around it, so `,event,` finds one exactly. */
export const eventsText = (events: string[]): string => `,${events.join(",")},`;

const hook = (r: HookRow): WebhookRow => ({
  id: r.id,
  keyId: r.key_id,
  network: r.network,
  signer: r.signer,
  url: r.url,
  events: r.events.split(",").filter(Boolean),
  secret: r.secret,
  logFilter: r.log_filter,
  previousSecret: r.previous_secret ?? null,
  previousUntil: r.previous_until === null || r.previous_until === undefined ? null : new Date(r.previous_until),
  createdAt: new Date(r.created_at),
  disabledAt: r.disabled_at === null ? null : new Date(r.disabled_at),
  disabledReason: r.disabled_reason,
});

const delivery = (r: DeliveryDbRow): DeliveryRow => ({
  seq: Number(r.seq),
  id: r.id,
  webhookId: r.webhook_id,
  event: r.event,
  queueId: r.queue_id,
  errorMessage: r.error_message,
  payload: r.payload,
  url: r.url ?? null,
  createdAt: new Date(r.created_at),
  status: r.status,
  attempts: r.attempts,
  lastStatus: r.last_status,
  lastError: r.last_error,
  deliveredAt: r.delivered_at === null ? null : new Date(r.delivered_at),
});

export function sqlWebhookStore(db: Pick<SqlClient, "query">): WebhookStore {
  const hooks = async (sql: string, params: unknown[]) => (await db.query<HookRow>(sql, params)).map(hook);
  const deliveries = async (sql: string, params: unknown[]) => (await db.query<DeliveryDbRow>(sql, params)).map(delivery);
  const lease = (ms: number) => `now() + make_interval(secs => ${Math.max(1, ms) / 1000})`;
  return {
    async insert(w) {
      const [row] = await hooks(
        `insert into webhooks (id, key_id, network, signer, url, events, secret, log_filter) values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
        [w.id, w.keyId, w.network, w.signer, w.url, eventsText(w.events), w.secret, w.logFilter],
      );
      return row!;
    },
    get: async (id) => (await hooks("select * from webhooks where id = $1", [id]))[0],
    // A key's callbacks endpoint (cb_…) is the gateway's means, not one of the key's endpoints.
    listByKey: (keyId, network) =>
      hooks("select * from webhooks where key_id = $1 and network = $2 and id not like 'cb\\_%' order by created_at, id", [keyId, network]),
    countByKey: async (keyId) =>
      Number((await db.query<{ n: string }>("select count(*) as n from webhooks where key_id = $1 and id not like 'cb\\_%'", [keyId]))[0]?.n ?? 0),
    async ensure(w) {
      await db.query(
        `insert into webhooks (id, key_id, network, signer, url, events, secret, log_filter) values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (id) do nothing`,
        [w.id, w.keyId, w.network, w.signer, w.url, eventsText(w.events), w.secret, w.logFilter],
      );
    },
    async rotateSecret(id, secret, previousUntil) {
      await db.query("update webhooks set previous_secret = secret, secret = $2, previous_until = $3 where id = $1", [id, secret, previousUntil]);
    },
    callbackSecret: async (keyId) => {
      const [r] = await db.query<{ secret: string; previous_secret: string | null; previous_until: Date | null }>(
        "select secret, previous_secret, previous_until from callback_secrets where key_id = $1",
        [keyId],
      );
      return r && { secret: r.secret, previousSecret: r.previous_secret, previousUntil: r.previous_until };
    },
    async rotateCallbackSecret(keyId, s) {
      await db.query(
        `insert into callback_secrets (key_id, secret, previous_secret, previous_until) values ($1, $2, $3, $4)
         on conflict (key_id) do update set secret = excluded.secret, previous_secret = excluded.previous_secret, previous_until = excluded.previous_until`,
        [keyId, s.secret, s.previousSecret, s.previousUntil],
      );
      await db.query("update webhooks set secret = $2, previous_secret = $3, previous_until = $4 where key_id = $1 and id like 'cb\\_%'", [
        keyId,
        s.secret,
        s.previousSecret,
        s.previousUntil,
      ]);
    },
    async rememberAbi(queueId, abi) {
      await db.query("insert into write_abis (queue_id, abi) values ($1, $2) on conflict (queue_id) do nothing", [queueId, abi]);
    },
    abiOf: async (queueId) => (await db.query<{ abi: string }>("select abi from write_abis where queue_id = $1", [queueId]))[0]?.abi,
    async attachCallback(queueId, webhookId, url) {
      await db.query("insert into write_callbacks (queue_id, webhook_id, url) values ($1, $2, $3) on conflict (queue_id) do nothing", [
        queueId,
        webhookId,
        url,
      ]);
    },
    enqueueOutcome: async (d) =>
      (
        await db.query(
          `insert into webhook_deliveries (webhook_id, event, queue_id, error_message, url, dedupe) values ($1, $2, $3, $4, $5, $6)
           on conflict (webhook_id, dedupe) where dedupe is not null do nothing returning seq`,
          [d.webhookId, d.event, d.queueId, d.errorMessage, d.url, d.dedupe],
        )
      ).length > 0,
    async remove(id) {
      await db.query("delete from webhook_deliveries where webhook_id = $1", [id]);
      return (await db.query("delete from webhooks where id = $1 returning id", [id])).length > 0;
    },
    async disable(id, reason) {
      await db.query("update webhooks set disabled_at = coalesce(disabled_at, now()), disabled_reason = $2 where id = $1", [id, reason]);
    },
    deliveries: (webhookId, limit) => deliveries("select * from webhook_deliveries where webhook_id = $1 order by seq desc limit $2", [webhookId, limit]),
    replay: async (webhookId, deliveryId) =>
      (
        await deliveries(
          `update webhook_deliveries set status = 'pending', attempts = 0, last_error = null, delivered_at = null
           where webhook_id = $1 and id = $2 returning *`,
          [webhookId, deliveryId],
        )
      )[0],
    enqueue: async (webhookId, event, payload, dedupe) =>
      (
        await db.query(
          "insert into webhook_deliveries (webhook_id, event, payload, dedupe) values ($1, $2, $3, $4) on conflict (webhook_id, dedupe) where dedupe is not null do nothing returning seq",
          [webhookId, event, payload, dedupe],
        )
      ).length > 0,
    withLogFilters: (network) => hooks("select * from webhooks where network = $1 and disabled_at is null and log_filter is not null", [network]),
    claim: (network, owner, leaseMs, limit) =>
      hooks(
        `update webhooks set lease_owner = $2, lease_until = ${lease(leaseMs)}
         where id in (
           select w.id from webhooks w
           where w.network = $1 and w.disabled_at is null and (w.lease_until is null or w.lease_until < now() or w.lease_owner = $2)
             and exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending')
           limit $3 for update skip locked)
         returning *`,
        [network, owner, limit],
      ),
    renew: async (ids, owner, leaseMs) =>
      ids.length === 0
        ? []
        : (
            await db.query<{ id: string }>(
              `update webhooks set lease_until = ${lease(leaseMs)} where id = any($1::text[]) and lease_owner = $2 and disabled_at is null returning id`,
              [ids, owner],
            )
          ).map((r) => r.id),
    async release(id, owner) {
      await db.query("update webhooks set lease_owner = null, lease_until = null where id = $1 and lease_owner = $2", [id, owner]);
    },
    async backlog(network) {
      const rows = await db.query<{ pending: string; oldest: number | null }>(
        `select count(*) as pending, extract(epoch from now() - min(d.created_at))::float8 as oldest
         from webhook_deliveries d join webhooks w on w.id = d.webhook_id
         where w.network = $1 and w.disabled_at is null and d.status = 'pending'`,
        [network],
      );
      return { pending: Number(rows[0]?.pending ?? 0), oldestSeconds: Math.max(0, rows[0]?.oldest ?? 0) };
    },
    nextPending: async (webhookId) =>
      (await deliveries("select * from webhook_deliveries where webhook_id = $1 and status = 'pending' order by seq limit 1", [webhookId]))[0],
    async delivered(id, status) {
      await db.query("update webhook_deliveries set status = 'delivered', last_status = $2, delivered_at = now(), attempts = attempts + 1 where id = $1", [
        id,
        status,
      ]);
    },
    async attempted(id, attempts, lastStatus, lastError) {
      await db.query("update webhook_deliveries set attempts = $2, last_status = $3, last_error = $4 where id = $1", [id, attempts, lastStatus, lastError]);
    },
    async failed(id, lastError) {
      await db.query("update webhook_deliveries set status = 'failed', last_error = $2 where id = $1", [id, lastError]);
    },
    async pruneFinished(before) {
      let total = 0;
      for (;;) {
        const gone = await db.query(
          `delete from webhook_deliveries where seq in (
             select seq from webhook_deliveries where status <> 'pending' and coalesce(delivered_at, created_at) < $1 limit $2)
           returning seq`,
          [before, PRUNE_SLICE],
        );
        total += gone.length;
        if (gone.length < PRUNE_SLICE) return total;
      }
    },
  };
}

/** The embedded store's statements, prepared once. */
function sqliteStatements(db: SqliteDatabase) {
  return {
    insert: statement<[string, string, string, string, string, string, string, string | null, number], HookRow>(
      db,
      `insert into webhooks (id, key_id, network, signer, url, events, secret, log_filter, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
    ),
    get: statement<[string], HookRow>(db, "select * from webhooks where id = ?"),
    // A key's callbacks endpoint (cb_…) is the gateway's means, not one of the key's endpoints.
    byKey: statement<[string, string], HookRow>(
      db,
      "select * from webhooks where key_id = ? and network = ? and substr(id, 1, 3) <> 'cb_' order by created_at, id",
    ),
    countByKey: statement<[string], { n: number }>(db, "select count(*) as n from webhooks where key_id = ? and substr(id, 1, 3) <> 'cb_'"),
    ensure: statement<[string, string, string, string, string, string, string, string | null, number], never>(
      db,
      `insert or ignore into webhooks (id, key_id, network, signer, url, events, secret, log_filter, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    attachCallback: statement<[string, string, string], never>(db, "insert or ignore into write_callbacks (queue_id, webhook_id, url) values (?, ?, ?)"),
    rotate: statement<[string, number, string], never>(db, "update webhooks set previous_secret = secret, secret = ?, previous_until = ? where id = ?"),
    callbackSecret: statement<[string], { secret: string; previous_secret: string | null; previous_until: number | null }>(
      db,
      "select secret, previous_secret, previous_until from callback_secrets where key_id = ?",
    ),
    setCallbackSecret: statement<[string, string, string | null, number | null], never>(
      db,
      "insert or replace into callback_secrets (key_id, secret, previous_secret, previous_until) values (?, ?, ?, ?)",
    ),
    rotateCallbacks: statement<[string, string | null, number | null, string], never>(
      db,
      "update webhooks set secret = ?, previous_secret = ?, previous_until = ? where key_id = ? and substr(id, 1, 3) = 'cb_'",
    ),
    rememberAbi: statement<[string, string], never>(db, "insert or ignore into write_abis (queue_id, abi) values (?, ?)"),
    abiOf: statement<[string], { abi: string }>(db, "select abi from write_abis where queue_id = ?"),
    enqueueOutcome: statement<[string, string, string, string | null, string, string, number], never>(
      db,
      `insert or ignore into webhook_deliveries (id, webhook_id, event, queue_id, error_message, url, dedupe, created_at)
       values (lower(hex(randomblob(16))), ?, ?, ?, ?, ?, ?, ?)`,
    ),
    removeDeliveries: statement<[string], never>(db, "delete from webhook_deliveries where webhook_id = ?"),
    remove: statement<[string], never>(db, "delete from webhooks where id = ?"),
    disable: statement<[number, string, string], never>(db, "update webhooks set disabled_at = coalesce(disabled_at, ?), disabled_reason = ? where id = ?"),
    deliveries: statement<[string, number], DeliveryDbRow>(db, "select * from webhook_deliveries where webhook_id = ? order by seq desc limit ?"),
    replay: statement<[string, string], DeliveryDbRow>(
      db,
      `update webhook_deliveries set status = 'pending', attempts = 0, last_error = null, delivered_at = null
       where webhook_id = ? and id = ? returning *`,
    ),
    enqueue: statement<[string, string, string, string, number], never>(
      db,
      "insert or ignore into webhook_deliveries (id, webhook_id, event, payload, dedupe, created_at) values (lower(hex(randomblob(16))), ?, ?, ?, ?, ?)",
    ),
    withLogFilters: statement<[string], HookRow>(db, "select * from webhooks where network = ? and disabled_at is null and log_filter is not null"),
    claim: statement<[string, number, number, string, string, number], HookRow>(
      db,
      `update webhooks set lease_owner = ?4, lease_until = ?2 + ?3
       where id in (
         select w.id from webhooks w
         where w.network = ?1 and w.disabled_at is null and (w.lease_until is null or w.lease_until < ?2 or w.lease_owner = ?5)
           and exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending')
         limit ?6)
       returning *`,
    ),
    renew: statement<[number, string, string], { id: string }>(
      db,
      "update webhooks set lease_until = ? where id = ? and lease_owner = ? and disabled_at is null returning id",
    ),
    release: statement<[string, string], never>(db, "update webhooks set lease_owner = null, lease_until = null where id = ? and lease_owner = ?"),
    nextPending: statement<[string], DeliveryDbRow>(db, "select * from webhook_deliveries where webhook_id = ? and status = 'pending' order by seq limit 1"),
    backlog: statement<[string], { pending: number; oldest: number | null }>(
      db,
      `select count(*) as pending, min(d.created_at) as oldest
       from webhook_deliveries d join webhooks w on w.id = d.webhook_id
       where w.network = ? and w.disabled_at is null and d.status = 'pending'`,
    ),
    delivered: statement<[number, number, string], never>(
      db,
      "update webhook_deliveries set status = 'delivered', last_status = ?, delivered_at = ?, attempts = attempts + 1 where id = ?",
    ),
    attempted: statement<[number, number | null, string, string], never>(
      db,
      "update webhook_deliveries set attempts = ?, last_status = ?, last_error = ? where id = ?",
    ),
    failed: statement<[string, string], never>(db, "update webhook_deliveries set status = 'failed', last_error = ? where id = ?"),
    pruneFinished: statement<[number, number], never>(
      db,
      `delete from webhook_deliveries where seq in (
         select seq from webhook_deliveries where status <> 'pending' and coalesce(delivered_at, created_at) < ? limit ?)`,
    ),
  };
}

export function sqliteWebhookStore(db: SqliteDatabase, changed: () => void = () => undefined): WebhookStore {
  const sql = sqliteStatements(db);
  return {
    async insert(w) {
      const row = hook(sql.insert.get(w.id, w.keyId, w.network, w.signer, w.url, eventsText(w.events), w.secret, w.logFilter, Date.now())!);
      changed();
      return row;
    },
    get: async (id) => {
      const r = sql.get.get(id);
      return r ? hook(r) : undefined;
    },
    listByKey: async (keyId, network) => sql.byKey.all(keyId, network).map(hook),
    countByKey: async (keyId) => sql.countByKey.get(keyId)?.n ?? 0,
    async remove(id) {
      sql.removeDeliveries.run(id);
      const removed = sql.remove.run(id).changes > 0;
      changed();
      return removed;
    },
    async disable(id, reason) {
      sql.disable.run(Date.now(), reason, id);
      changed();
    },
    deliveries: async (webhookId, limit) => sql.deliveries.all(webhookId, limit).map(delivery),
    replay: async (webhookId, deliveryId) => {
      const r = sql.replay.get(webhookId, deliveryId);
      return r ? delivery(r) : undefined;
    },
    enqueue: async (webhookId, event, payload, dedupe) => sql.enqueue.run(webhookId, event, payload, dedupe, Date.now()).changes > 0,
    withLogFilters: async (network) => sql.withLogFilters.all(network).map(hook),
    async ensure(w) {
      if (sql.ensure.run(w.id, w.keyId, w.network, w.signer, w.url, eventsText(w.events), w.secret, w.logFilter, Date.now()).changes > 0) changed();
    },
    async attachCallback(queueId, webhookId, url) {
      sql.attachCallback.run(queueId, webhookId, url);
    },
    async rotateSecret(id, secret, previousUntil) {
      sql.rotate.run(secret, previousUntil.getTime(), id);
      changed();
    },
    callbackSecret: async (keyId) => {
      const r = sql.callbackSecret.get(keyId);
      return r && { secret: r.secret, previousSecret: r.previous_secret, previousUntil: r.previous_until === null ? null : new Date(r.previous_until) };
    },
    async rotateCallbackSecret(keyId, s) {
      const until = s.previousUntil?.getTime() ?? null;
      transaction(db, () => {
        sql.setCallbackSecret.run(keyId, s.secret, s.previousSecret, until);
        sql.rotateCallbacks.run(s.secret, s.previousSecret, until, keyId);
      })();
      changed();
    },
    async rememberAbi(queueId, abi) {
      sql.rememberAbi.run(queueId, abi);
    },
    abiOf: async (queueId) => sql.abiOf.get(queueId)?.abi,
    enqueueOutcome: async (d) => sql.enqueueOutcome.run(d.webhookId, d.event, d.queueId, d.errorMessage, d.url, d.dedupe, Date.now()).changes > 0,
    claim: async (network, owner, leaseMs, limit) => sql.claim.all(network, Date.now(), leaseMs, owner, owner, limit).map(hook),
    renew: async (ids, owner, leaseMs) => ids.filter((id) => sql.renew.get(Date.now() + leaseMs, id, owner) !== undefined),
    async release(id, owner) {
      sql.release.run(id, owner);
    },
    async backlog(network) {
      const r = sql.backlog.get(network);
      return { pending: r?.pending ?? 0, oldestSeconds: r?.oldest ? Math.max(0, (Date.now() - r.oldest) / 1000) : 0 };
    },
    nextPending: async (webhookId) => {
      const r = sql.nextPending.get(webhookId);
      return r ? delivery(r) : undefined;
    },
    async delivered(id, status) {
      sql.delivered.run(status, Date.now(), id);
    },
    async attempted(id, attempts, lastStatus, lastError) {
      sql.attempted.run(attempts, lastStatus, lastError, id);
    },
    async failed(id, lastError) {
      sql.failed.run(lastError, id);
    },
    async pruneFinished(before) {
      let total = 0;
      for (;;) {
        const n = Number(sql.pruneFinished.run(before.getTime(), PRUNE_SLICE).changes);
        total += n;
        if (n < PRUNE_SLICE) return total;
        // SQLite's deletes hold the event loop: a slice at a time.
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}
