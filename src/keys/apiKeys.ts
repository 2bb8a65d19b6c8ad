// API keys: random and high-entropy, shown once, stored only as a SHA-256 hash; each owns a wallet derived
// from the master seed at its own index. A key revoked through this gateway fails at once on every path; one
// revoked by another process (the CLI, or a replica, on a shared PostgreSQL) within LOOKUP_CACHE_MS.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { GatewayError } from "../errors.js";
import type { Access } from "../rpc/methodPolicy.js";
import type { SqlClient } from "../store/sqlClient.js";
import type { MasterSeed } from "./masterSeed.js";

export interface ApiKeyInfo {
  id: string;
  /** The key's first characters: safe to show, enough to tell keys apart. */
  prefix: string;
  label: string;
  walletIndex: number;
  walletAddress: string;
  createdAt: Date;
  revokedAt: Date | null;
  requestsPerMinute: number | null;
  transactionsPerDay: number | null;
}

export interface NewKeyOptions {
  label?: string;
  requestsPerMinute?: number;
  transactionsPerDay?: number;
}

interface Row {
  id: string;
  prefix: string;
  label: string;
  wallet_index: number;
  created_at: Date | string;
  revoked_at: Date | string | null;
  requests_per_minute: number | null;
  transactions_per_day: number | null;
}

const KEY_PREFIX = "cgw_";
const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 8;

export function hashKey(apiKey: string): string {
  return createHash("sha256").update(apiKey, "utf8").digest("hex");
}

/**
 * How long a looked-up key's row answers again without a query: a keyed request otherwise cost one journal
 * query each (bench, 8 keys: ~550 -> ~900 ZKT writes/s with the cache).
 */
export const LOOKUP_CACHE_MS = 1_000;
const LOOKUP_CACHE_MAX = 10_000;

export class ApiKeys {
  /** Recently looked-up keys by hash (found rows only: an unknown key is asked for every time). */
  private readonly recent = new Map<string, { row: Row; at: number }>();

  constructor(
    private readonly db: SqlClient,
    private readonly seed: MasterSeed,
  ) {}

  /** Issues a key. The returned apiKey is the only time the secret exists outside the caller. */
  async create(options: NewKeyOptions = {}): Promise<{ apiKey: string; info: ApiKeyInfo }> {
    const label = (options.label ?? "").trim();
    if (label.length > 100) throw new GatewayError("validation", "label must be at most 100 characters");
    for (const [name, v] of [["requestsPerMinute", options.requestsPerMinute], ["transactionsPerDay", options.transactionsPerDay]] as const) {
      if (v !== undefined && (!Number.isInteger(v) || v <= 0)) throw new GatewayError("validation", `${name} must be a positive integer`);
    }
    const apiKey = KEY_PREFIX + randomBytes(32).toString("base64url");
    const [row] = await this.db.query<Row>(
      `insert into api_keys (id, prefix, key_hash, label, wallet_index, requests_per_minute, transactions_per_day)
       values ($1, $2, $3, $4, nextval('api_key_wallet_index'), $5, $6) returning *`,
      [randomUUID(), apiKey.slice(0, SHOWN_PREFIX_LENGTH), hashKey(apiKey), label, options.requestsPerMinute ?? null, options.transactionsPerDay ?? null],
    );
    return { apiKey, info: this.info(row!) };
  }

  /**
   * The access an API key grants. Every input is hashed and looked up the same way, whatever its length or
   * how close it is to a real key, so timing tells an attacker nothing (a cached answer needs the exact key).
   */
  async authenticate(apiKey: string): Promise<Access> {
    const hash = hashKey(apiKey);
    const now = Date.now();
    let hit = this.recent.get(hash);
    if (!hit || now - hit.at > LOOKUP_CACHE_MS) {
      const [found] = await this.db.query<Row>("select * from api_keys where key_hash = $1", [hash]);
      if (!found) {
        this.recent.delete(hash);
        throw new GatewayError("unauthorized", "unknown API key: get a free key with POST /portal/keys");
      }
      if (this.recent.size >= LOOKUP_CACHE_MAX) this.recent.clear();
      this.recent.set(hash, (hit = { row: found, at: now }));
    }
    const row = hit.row;
    if (row.revoked_at !== null) throw new GatewayError("unauthorized", "this API key has been revoked");
    return { kind: "key", keyId: row.id, walletIndex: row.wallet_index, requestsPerMinute: row.requests_per_minute, transactionsPerDay: row.transactions_per_day };
  }

  async get(id: string): Promise<ApiKeyInfo | undefined> {
    const [row] = await this.db.query<Row>("select * from api_keys where id = $1", [id]);
    return row ? this.info(row) : undefined;
  }

  /**
   * The gateway wallet with this address: the shared signer or a key's (revoked keys included, their
   * journaled transactions still need finishing). Derivation is cached; used only on recovery paths.
   */
  async walletByAddress(address: string): Promise<ReturnType<MasterSeed["wallet"]> | undefined> {
    if (this.seed.wallet(0).address === address) return this.seed.wallet(0);
    const rows = await this.db.query<{ wallet_index: number }>("select wallet_index from api_keys order by wallet_index");
    for (const r of rows) if (this.seed.wallet(r.wallet_index).address === address) return this.seed.wallet(r.wallet_index);
    return undefined;
  }

  /** Keys whose shown prefix starts with `prefix` (all when absent), newest first. */
  async list(prefix = ""): Promise<ApiKeyInfo[]> {
    const rows = await this.db.query<Row>("select * from api_keys where prefix like $1 order by created_at desc", [prefix.replace(/[%_\\]/g, "\\$&") + "%"]);
    return rows.map((r) => this.info(r));
  }

  /** Revokes by id or by a prefix that names exactly one key. */
  async revoke(idOrPrefix: string): Promise<ApiKeyInfo> {
    const matches = (await this.db.query<Row>("select * from api_keys where id = $1", [idOrPrefix])).length > 0 ? [{ id: idOrPrefix }] : (await this.list(idOrPrefix)).map((k) => ({ id: k.id }));
    if (matches.length === 0) throw new GatewayError("not_found", `no API key matches "${idOrPrefix}"`);
    if (matches.length > 1) throw new GatewayError("validation", `"${idOrPrefix}" matches ${matches.length} keys; give a longer prefix or the id`);
    const [row] = await this.db.query<Row>("update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning *", [matches[0]!.id]);
    this.recent.clear(); // revoked through this gateway: refused at once
    return this.info(row!);
  }

  private info(r: Row): ApiKeyInfo {
    return {
      id: r.id,
      prefix: r.prefix,
      label: r.label,
      walletIndex: r.wallet_index,
      walletAddress: this.seed.wallet(r.wallet_index).address,
      createdAt: new Date(r.created_at),
      revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
      requestsPerMinute: r.requests_per_minute,
      transactionsPerDay: r.transactions_per_day,
    };
  }
}
