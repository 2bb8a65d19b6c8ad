// API keys: random and high-entropy, shown once, stored only as a SHA-256 hash; each owns the wallet at its own
// index (keys/custody: derived from the master seed, or a key pair in a PKCS#11 token). A key revoked through
// this gateway fails at once on every path; one revoked by another process (the keys CLI, or a replica on a
// shared PostgreSQL) within LOOKUP_CACHE_MS.
import { ttlCache } from "../ttlCache.js";
import { hash, randomBytes, randomUUID } from "node:crypto";
import { GatewayError } from "../errors.js";
import type { Access } from "./access.js";
import type { KeyLimitsRow, KeyRow, KeyTable } from "../store/keyTable.js";
import type { Wallets } from "./custody/wallets.js";
import type { TxSigner } from "../sequencer/txSigner.js";

export interface ApiKeyInfo extends KeyRow {
  walletAddress: string;
  /** The wallets the key moved away from, oldest first. */
  previousWallets: { address: string; movedAt: Date }[];
}

/** A key's own limits; an absent one is the gateway's setting. */
export interface KeyLimits {
  requestsPerMinute?: number | undefined;
  transactionsPerDay?: number | undefined;
  writesPerMonth?: number | undefined;
  /** The only addresses the key's writes may go to (a receiver allowlist); any when absent or empty. */
  allowedTargets?: string[] | undefined;
}

export interface NewKeyOptions extends KeyLimits {
  label?: string;
}

function validLimits(options: KeyLimits): KeyLimitsRow {
  for (const [name, v] of [
    ["requestsPerMinute", options.requestsPerMinute],
    ["transactionsPerDay", options.transactionsPerDay],
    ["writesPerMonth", options.writesPerMonth],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v <= 0)) throw new GatewayError("validation", `${name} must be a positive integer`);
  }
  const targets = options.allowedTargets?.map((t) => t.trim().toLowerCase());
  if (targets?.some((t) => !/^0x[0-9a-f]{40}$/.test(t))) throw new GatewayError("validation", "allowedTargets must be 0x-prefixed 20-byte addresses");
  return {
    requestsPerMinute: options.requestsPerMinute ?? null,
    transactionsPerDay: options.transactionsPerDay ?? null,
    writesPerMonth: options.writesPerMonth ?? null,
    allowedTargets: targets && targets.length > 0 ? [...new Set(targets)] : null,
  };
}

const KEY_PREFIX = "cgw_";
const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 8;

export function hashKey(apiKey: string): string {
  // One-shot: no Hash object per keyed request (createHash/update/digest cost ~2.6x as much here).
  return hash("sha256", apiKey, "hex");
}

/** How long a looked-up key's row answers again without a query (else each keyed request is one query). */
export const LOOKUP_CACHE_MS = 1_000;
const LOOKUP_CACHE_MAX = 10_000;

export class ApiKeys {
  /** Recently looked-up keys by hash (found rows only: an unknown key is asked for every time). */
  private readonly recent = ttlCache<string, KeyRow>(LOOKUP_CACHE_MAX, LOOKUP_CACHE_MS);

  constructor(
    private readonly table: KeyTable,
    private readonly wallets: Wallets,
  ) {}

  /** Issues a key. The returned apiKey is the only time the secret exists outside the caller. */
  async create(options: NewKeyOptions = {}): Promise<{ apiKey: string; info: ApiKeyInfo }> {
    const label = (options.label ?? "").trim();
    if (label.length > 100) throw new GatewayError("validation", "label must be at most 100 characters");
    const limits = validLimits(options);
    const apiKey = KEY_PREFIX + randomBytes(32).toString("base64url");
    const row = await this.table.insert({ id: randomUUID(), prefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH), keyHash: hashKey(apiKey), label, ...limits });
    return { apiKey, info: await this.info(row) };
  }

  /** Replaces a key's own limits; this gateway applies them at once (another process within LOOKUP_CACHE_MS). */
  async setLimits(id: string, options: KeyLimits): Promise<ApiKeyInfo> {
    const row = await this.table.setLimits(id, validLimits(options));
    if (!row) throw new GatewayError("not_found", `no API key has the id "${id}"`);
    this.recent.clear();
    return this.info(row);
  }

  /**
   * The access an API key grants. Every input is hashed and looked up the same way, whatever its length or
   * how close it is to a real key, so timing tells an attacker nothing (a cached answer needs the exact key).
   */
  async authenticate(apiKey: string): Promise<Access> {
    const hash = hashKey(apiKey);
    let row = this.recent.get(hash);
    if (!row) {
      row = await this.table.byHash(hash);
      if (!row) throw new GatewayError("unauthorized", "unknown API key: get a free key with POST /portal/keys");
      // Its wallet usable here before anything signs for it (a token's is looked up, or made, once).
      await this.wallets.ready(row.walletIndex);
      this.recent.set(hash, row);
    }
    if (row.revokedAt !== null) throw new GatewayError("unauthorized", "this API key has been revoked");
    return {
      kind: "key",
      keyId: row.id,
      walletIndex: row.walletIndex,
      requestsPerMinute: row.requestsPerMinute,
      transactionsPerDay: row.transactionsPerDay,
      writesPerMonth: row.writesPerMonth,
      allowedTargets: row.allowedTargets,
    };
  }

  async get(id: string): Promise<ApiKeyInfo | undefined> {
    const row = await this.table.byId(id);
    return row ? this.info(row) : undefined;
  }

  /**
   * The gateway wallet with this address: the shared signer or a key's (revoked keys included, their
   * journaled transactions still need finishing). Derivation is cached; used only on recovery paths.
   */
  walletByAddress(address: string): Promise<TxSigner | undefined> {
    return this.wallets.byAddress(address, () => this.table.walletIndexes());
  }

  /** Keys whose shown prefix starts with `prefix` (all when absent), newest first. */
  async list(prefix = ""): Promise<ApiKeyInfo[]> {
    return Promise.all((await this.table.byPrefix(prefix)).map((r) => this.info(r)));
  }

  /** Revokes by id or by a prefix that names exactly one key. */
  async revoke(idOrPrefix: string): Promise<ApiKeyInfo> {
    const matches = (await this.table.byId(idOrPrefix)) ? [{ id: idOrPrefix }] : (await this.list(idOrPrefix)).map((k) => ({ id: k.id }));
    if (matches.length === 0) throw new GatewayError("not_found", `no API key matches "${idOrPrefix}"`);
    if (matches.length > 1) throw new GatewayError("validation", `"${idOrPrefix}" matches ${matches.length} keys; give a longer prefix or the id`);
    const row = await this.table.revoke(matches[0]!.id);
    this.recent.clear(); // revoked through this gateway: refused at once
    return this.info(row!);
  }

  /**
   * A new wallet for the key: its next write is signed by it (at once through this gateway, within
   * LOOKUP_CACHE_MS elsewhere). The old one stays the key's history and is never handed out again.
   */
  async moveWallet(id: string): Promise<ApiKeyInfo> {
    const row = await this.table.moveWallet(id);
    if (!row) throw new GatewayError("not_found", `no API key has the id "${id}"`);
    this.recent.clear();
    return this.info(row);
  }

  private async info(r: KeyRow): Promise<ApiKeyInfo> {
    const history = await this.table.walletHistory(r.id);
    await Promise.all([r.walletIndex, ...history.map((h) => h.walletIndex)].map((i) => this.wallets.ready(i)));
    return {
      ...r,
      walletAddress: this.wallets.signer(r.walletIndex).address,
      previousWallets: history.map((h) => ({ address: this.wallets.signer(h.walletIndex).address, movedAt: h.movedAt })),
    };
  }
}
