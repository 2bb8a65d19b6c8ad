// Where API keys are kept: PostgreSQL (DATABASE_URL) or the embedded SQLite file. ApiKeys holds the rules
// (hashing, the lookup cache, what a key grants); this holds only the rows, in each database's own SQL.
import { type SqliteDatabase, statement, transaction } from "./sqliteFile.js";
import type { SqlClient } from "./sqlClient.js";

export interface KeyRow {
  id: string;
  /** The key's first characters: safe to show, enough to tell keys apart. */
  prefix: string;
  label: string;
  walletIndex: number;
  createdAt: Date;
  revokedAt: Date | null;
  requestsPerMinute: number | null;
  transactionsPerDay: number | null;
  /** Its own 30-day write quota, or null for the gateway's. */
  writesPerMonth: number | null;
  /** The only addresses the key's writes may go to (lowercase), or null for any. */
  allowedTargets: string[] | null;
}

/** A key's own limits, as an operator sets them (null: the gateway's setting; allowedTargets null: any). */
export type KeyLimitsRow = Pick<KeyRow, "requestsPerMinute" | "transactionsPerDay" | "writesPerMonth" | "allowedTargets">;

export interface NewKeyRow {
  id: string;
  prefix: string;
  keyHash: string;
  label: string;
  requestsPerMinute: number | null;
  transactionsPerDay: number | null;
  writesPerMonth: number | null;
  allowedTargets: string[] | null;
}

export interface KeyTable {
  /** Stores a key under the next unused wallet index (each key's wallet is its own). */
  insert(key: NewKeyRow): Promise<KeyRow>;
  byHash(keyHash: string): Promise<KeyRow | undefined>;
  byId(id: string): Promise<KeyRow | undefined>;
  /** Every key's wallet index, revoked keys and wallets moved away from included. */
  walletIndexes(): Promise<number[]>;
  /** Gives the key the next unused wallet index; its current one goes to its history. */
  moveWallet(id: string): Promise<KeyRow | undefined>;
  /** The wallets the key moved away from, oldest first. */
  walletHistory(id: string): Promise<{ walletIndex: number; movedAt: Date }[]>;
  /** Keys whose shown prefix starts with `prefix`, newest first. */
  byPrefix(prefix: string): Promise<KeyRow[]>;
  /** Marks the key revoked (the first revocation's time stays). */
  revoke(id: string): Promise<KeyRow | undefined>;
  /** Replaces the key's own limits. */
  setLimits(id: string, limits: KeyLimitsRow): Promise<KeyRow | undefined>;
}

/** A row as either database hands it back: PostgreSQL's timestamptz as a Date, SQLite's as milliseconds. */
interface Row {
  id: string;
  prefix: string;
  label: string;
  wallet_index: number;
  created_at: Date | number;
  revoked_at: Date | number | null;
  requests_per_minute: number | null;
  transactions_per_day: number | null;
  writes_per_month: number | null;
  /** Comma-separated lowercase addresses, or null. */
  allowed_targets: string | null;
}

const fromRow = (r: Row): KeyRow => ({
  id: r.id,
  prefix: r.prefix,
  label: r.label,
  walletIndex: r.wallet_index,
  createdAt: new Date(r.created_at),
  revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
  requestsPerMinute: r.requests_per_minute,
  transactionsPerDay: r.transactions_per_day,
  writesPerMonth: r.writes_per_month ?? null,
  allowedTargets: r.allowed_targets === null || r.allowed_targets === undefined ? null : r.allowed_targets.split(",").filter(Boolean),
});
const targetsText = (t: string[] | null): string | null => (t === null ? null : t.join(","));

/** One past the highest wallet index any key has, or had (a moved-from wallet is never handed out again). */
const NEXT_INDEX =
  "select coalesce(max(i), 0) + 1 from (select max(wallet_index) as i from api_keys union all select max(wallet_index) from key_wallet_history)";

/** `like` matches the prefix's pattern characters literally once escaped (`\` is PostgreSQL's escape). */
const likePrefix = (prefix: string): string => prefix.replace(/[%_\\]/g, "\\$&") + "%";

export function sqlKeyTable(db: Pick<SqlClient, "query">): KeyTable {
  const one = async (sql: string, params: unknown[]): Promise<KeyRow | undefined> => {
    const [row] = await db.query<Row>(sql, params);
    return row ? fromRow(row) : undefined;
  };
  return {
    async insert(k) {
      // A sequence, so replicas inserting at once never take the same index.
      const row = await one(
        `insert into api_keys (id, prefix, key_hash, label, wallet_index, requests_per_minute, transactions_per_day, writes_per_month, allowed_targets)
         values ($1, $2, $3, $4, nextval('api_key_wallet_index'), $5, $6, $7, $8) returning *`,
        [k.id, k.prefix, k.keyHash, k.label, k.requestsPerMinute, k.transactionsPerDay, k.writesPerMonth, targetsText(k.allowedTargets)],
      );
      return row!;
    },
    byHash: (keyHash) => one("select * from api_keys where key_hash = $1", [keyHash]),
    byId: (id) => one("select * from api_keys where id = $1", [id]),
    walletIndexes: async () =>
      (
        await db.query<{ wallet_index: number }>(
          "select wallet_index from api_keys union select wallet_index from key_wallet_history order by wallet_index",
          [],
        )
      ).map((r) => r.wallet_index),
    moveWallet: (id) =>
      one(
        `with old as (insert into key_wallet_history (wallet_index, key_id) select wallet_index, id from api_keys where id = $1 returning key_id)
         update api_keys set wallet_index = nextval('api_key_wallet_index') where id in (select key_id from old) returning *`,
        [id],
      ),
    walletHistory: async (id) =>
      (
        await db.query<{ wallet_index: number; moved_at: Date }>(
          "select wallet_index, moved_at from key_wallet_history where key_id = $1 order by moved_at, wallet_index",
          [id],
        )
      ).map((r) => ({ walletIndex: r.wallet_index, movedAt: r.moved_at })),
    byPrefix: async (prefix) =>
      (await db.query<Row>("select * from api_keys where prefix like $1 order by created_at desc", [likePrefix(prefix)])).map(fromRow),
    revoke: (id) => one("update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning *", [id]),
    setLimits: (id, l) =>
      one("update api_keys set requests_per_minute = $2, transactions_per_day = $3, writes_per_month = $4, allowed_targets = $5 where id = $1 returning *", [
        id,
        l.requestsPerMinute,
        l.transactionsPerDay,
        l.writesPerMonth,
        targetsText(l.allowedTargets),
      ]),
  };
}

export function sqliteKeyTable(db: SqliteDatabase): KeyTable {
  const sql = {
    // One statement, so one write transaction: SQLite runs those one at a time across processes (the gateway,
    // the keys CLI), and the next index is simply one past the highest. Keys are revoked, never deleted, so no
    // index is handed out twice.
    insert: statement<[string, string, string, string, number, number | null, number | null, number | null, string | null], Row>(
      db,
      `insert into api_keys (id, prefix, key_hash, label, wallet_index, created_at, requests_per_minute, transactions_per_day, writes_per_month, allowed_targets)
       values (?, ?, ?, ?, (${NEXT_INDEX}), ?, ?, ?, ?, ?) returning *`,
    ),
    byHash: statement<[string], Row>(db, "select * from api_keys where key_hash = ?"),
    byId: statement<[string], Row>(db, "select * from api_keys where id = ?"),
    walletIndexes: statement<[], { wallet_index: number }>(
      db,
      "select wallet_index from api_keys union select wallet_index from key_wallet_history order by wallet_index",
    ),
    keepOld: statement<[number, string], never>(
      db,
      "insert into key_wallet_history (wallet_index, key_id, moved_at) select wallet_index, id, ? from api_keys where id = ?",
    ),
    moveTo: statement<[string], Row>(db, `update api_keys set wallet_index = (${NEXT_INDEX}) where id = ? returning *`),
    history: statement<[string], { wallet_index: number; moved_at: number }>(
      db,
      "select wallet_index, moved_at from key_wallet_history where key_id = ? order by moved_at, wallet_index",
    ),
    // Not like: SQLite's ignores case, and a key's prefix is case-sensitive base64url.
    byPrefix: statement<[number, string], Row>(db, "select * from api_keys where substr(prefix, 1, ?) = ? order by created_at desc, rowid desc"),
    revoke: statement<[number, string], Row>(db, "update api_keys set revoked_at = coalesce(revoked_at, ?) where id = ? returning *"),
    setLimits: statement<[number | null, number | null, number | null, string | null, string], Row>(
      db,
      "update api_keys set requests_per_minute = ?, transactions_per_day = ?, writes_per_month = ?, allowed_targets = ? where id = ? returning *",
    ),
  };
  const maybe = (r: Row | undefined): KeyRow | undefined => (r ? fromRow(r) : undefined);
  return {
    insert: async (k) =>
      fromRow(
        sql.insert.get(
          k.id,
          k.prefix,
          k.keyHash,
          k.label,
          Date.now(),
          k.requestsPerMinute,
          k.transactionsPerDay,
          k.writesPerMonth,
          targetsText(k.allowedTargets),
        )!,
      ),
    byHash: async (keyHash) => maybe(sql.byHash.get(keyHash)),
    byId: async (id) => maybe(sql.byId.get(id)),
    walletIndexes: async () => sql.walletIndexes.all().map((r) => r.wallet_index),
    moveWallet: async (id) =>
      transaction(
        db,
        () => {
          sql.keepOld.run(Date.now(), id);
          return maybe(sql.moveTo.get(id));
        },
        "immediate",
      )(),
    walletHistory: async (id) => sql.history.all(id).map((r) => ({ walletIndex: r.wallet_index, movedAt: new Date(r.moved_at) })),
    byPrefix: async (prefix) => sql.byPrefix.all(prefix.length, prefix).map(fromRow),
    revoke: async (id) => maybe(sql.revoke.get(Date.now(), id)),
    setLimits: async (id, l) => maybe(sql.setLimits.get(l.requestsPerMinute, l.transactionsPerDay, l.writesPerMonth, targetsText(l.allowedTargets), id)),
  };
}
