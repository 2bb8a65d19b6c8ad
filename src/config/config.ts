// The gateway's one typed configuration object. Sources, later wins: built-in defaults, a JSON config file
// (CONFIG_FILE, else ./chain-gateway.config.json when present), environment variables. Validated at start;
// every problem is reported at once with the setting's name.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ValidatorSourceConfig } from "../platform/validators.js";
import { DEFAULT_STALE_CLAIM_MS } from "../store/idempotencyStore.js";

export type FeeMode = "zero" | "market";
export type NetworkName = "testnet" | "mainnet";

export interface NetworkConfig {
  name: NetworkName;
  chainId: number;
  /** Port of this network's base address; 0 picks a free one. */
  port: number;
  /** Upstream node URLs; empty means "start an embedded anvil". */
  upstreams: string[];
  feeMode: FeeMode;
  /** Embedded anvil's interval-mining period, seconds. */
  blockTimeSeconds: number;
  /** Where V1 messages are sent. */
  messageRecipient: string;
  /** solc evmVersion for ZKT deploys; paris avoids PUSH0 for chains without Shanghai. */
  evmVersion: string;
  /** Where platform_getValidatorList comes from: a static list, the node's clique/qbft RPC, or its coinbase. */
  validators: ValidatorSourceConfig;
  /** platform_getActiveValidatorList: validators that proposed one of this many latest blocks. */
  activeValidatorWindowBlocks: number;
  /** Token contracts platform_getSupportedTokens lists (checked at start to hold code). */
  supportedTokens: string[];
  /** Blocks this deep are final for the read cache (reorg safety). */
  cacheConfirmations: number;
}

export interface GatewayConfig {
  host: string;
  dataDir: string;
  /** Largest accepted request body on every endpoint, bytes. */
  bodyLimitBytes: number;
  maxBatchSize: number;
  /** Identical read calls in flight at the same moment share one upstream request. */
  coalesceReads: boolean;
  upstreamTimeoutMs: number;
  /** How often unhealthy upstreams are probed again, ms. */
  upstreamProbeIntervalMs: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** PostgreSQL for keys, idempotency answers and the journal; the embedded SQLite file under dataDir when absent. */
  databaseUrl?: string;
  /** Keys POST /portal/keys issues per client IP per hour. */
  portalKeysPerHour: number;
  rateLimit: {
    /** Requests per caller per network per window (a batch of n counts n). */
    requestsPerWindow: number;
    windowMs: number;
    /** Stricter limit for POST /zkt/try-it-out, per IP per window. */
    tryItOutRequestsPerWindow: number;
    /** When Redis is unreachable: "open" serves without limits, "closed" refuses (503). Logged either way. */
    failMode: "open" | "closed";
    decisionTimeoutMs: number;
    /** Namespace of the limiters' Redis keys. */
    keyPrefix?: string;
  };
  /** Embedded dev chains keep their state in dataDir across restarts (false: a fresh chain each start). */
  embeddedState: boolean;
  /** Signers' nonce lanes (and their wallets) kept while idle, per network; past it the least recently used go. */
  maxIdleLanes: number;
  /** Bounds on every client connection (see transport/http/listen.ts). */
  http: {
    /** The request head must arrive within this (node:http's headersTimeout); 408 or close after. */
    headersTimeoutMs: number;
    /** The whole request must arrive within this (node:http's requestTimeout). */
    requestTimeoutMs: number;
    /** Idle keep-alive connections (HTTP/1.1 and h2) are closed after this. */
    keepAliveTimeoutMs: number;
    /** Open connections per network port; past this, new ones are answered 503 and closed. */
    maxConnections: number;
  };
  /** BIP-39 phrase of the master seed; generated into dataDir when absent. Replicas must share it. */
  masterMnemonic?: string;
  /** Redis for limits shared by every replica; in-process limits when absent. */
  redisUrl?: string;
  /** Proxies whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  /** A broadcast transaction unmined this long is sent again (fee networks: replaced with higher fees) (ms). */
  stuckTransactionMs: number;
  /** How long a write with wait (and a deploy) waits to be mined before it is answered 503 (ms); it is still sent. */
  receiptWaitMs: number;
  /** An Idempotency-Key claim unanswered this long was left by a stopped process, and is settled (ms). */
  idempotencyStaleMs: number;
  /** Mined or failed submissions are deleted from the journal after this many days; 0 keeps them. */
  journalRetentionDays: number;
  networks: NetworkConfig[];
}

export const defaultNetworks: Record<NetworkName, NetworkConfig> = {
  testnet: {
    name: "testnet",
    chainId: 20180427,
    port: 8545,
    upstreams: [],
    feeMode: "zero",
    blockTimeSeconds: 0.25,
    messageRecipient: "0x0000000000000000000000000000000000000000",
    evmVersion: "paris",
    validators: { source: "coinbase" },
    activeValidatorWindowBlocks: 64,
    supportedTokens: [],
    cacheConfirmations: 2,
  },
  mainnet: {
    name: "mainnet",
    chainId: 101010,
    port: 8546,
    upstreams: [],
    feeMode: "zero",
    blockTimeSeconds: 0.25,
    messageRecipient: "0x0000000000000000000000000000000000000000",
    evmVersion: "paris",
    validators: { source: "coinbase" },
    activeValidatorWindowBlocks: 64,
    supportedTokens: [],
    cacheConfirmations: 2,
  },
};

export function defaultConfig(): GatewayConfig {
  return {
    host: "127.0.0.1",
    dataDir: ".data",
    bodyLimitBytes: 1024 * 1024,
    maxBatchSize: 40,
    coalesceReads: true,
    upstreamTimeoutMs: 10_000,
    upstreamProbeIntervalMs: 1_000,
    logLevel: "info",
    portalKeysPerHour: 10,
    rateLimit: { requestsPerWindow: 1500, windowMs: 60_000, tryItOutRequestsPerWindow: 100, failMode: "open", decisionTimeoutMs: 250 },
    trustedProxies: [],
    maxIdleLanes: 10_000,
    embeddedState: true,
    http: { headersTimeoutMs: 60_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 65_000, maxConnections: 10_000 },
    stuckTransactionMs: 30_000,
    receiptWaitMs: 60_000,
    idempotencyStaleMs: DEFAULT_STALE_CLAIM_MS,
    journalRetentionDays: 30,
    networks: [structuredClone(defaultNetworks.testnet), structuredClone(defaultNetworks.mainnet)],
  };
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
  }
}

type Env = Record<string, string | undefined>;

/** Reads file + env over the defaults and validates. Throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env, cwd = process.cwd()): GatewayConfig {
  const config = defaultConfig();
  const problems: string[] = [];
  const file = env.CONFIG_FILE ?? (existsSync(resolve(cwd, "chain-gateway.config.json")) ? "chain-gateway.config.json" : undefined);
  if (file !== undefined) {
    try {
      mergeFile(config, JSON.parse(readFileSync(resolve(cwd, file), "utf8")) as unknown, problems);
    } catch (err) {
      problems.push(`CONFIG_FILE ${file}: ${(err as Error).message}`);
    }
  }
  mergeEnv(config, env, problems);
  problems.push(...validateConfig(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function mergeFile(config: GatewayConfig, raw: unknown, problems: string[]): void {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    problems.push("config file: must be a JSON object");
    return;
  }
  const obj = raw as Record<string, unknown>;
  const known = new Set(["host", "dataDir", "bodyLimitBytes", "maxBatchSize", "coalesceReads", "upstreamTimeoutMs", "upstreamProbeIntervalMs", "logLevel", "databaseUrl", "portalKeysPerHour", "rateLimit", "http", "maxIdleLanes", "embeddedState", "redisUrl", "trustedProxies", "masterMnemonic", "stuckTransactionMs", "receiptWaitMs", "idempotencyStaleMs", "journalRetentionDays", "networks"]);
  for (const key of Object.keys(obj)) if (!known.has(key)) problems.push(`config file: unknown setting "${key}"`);
  const { networks, ...rest } = obj;
  // Merged deeply: a file setting one field of a group (rateLimit, http) keeps the group's other defaults.
  Object.assign(config, deepMerge(config as unknown as Record<string, unknown>, pick(rest, known) as Record<string, unknown>));
  if (networks !== undefined) {
    if (typeof networks !== "object" || networks === null || Array.isArray(networks)) {
      problems.push('config file: "networks" must be an object keyed by "testnet"/"mainnet"');
      return;
    }
    const selected: NetworkConfig[] = [];
    for (const [name, value] of Object.entries(networks as Record<string, unknown>)) {
      if (name !== "testnet" && name !== "mainnet") {
        problems.push(`config file: unknown network "${name}" (expected testnet or mainnet)`);
        continue;
      }
      selected.push({ ...(deepMerge(structuredClone(defaultNetworks[name]) as unknown as Record<string, unknown>, (value ?? {}) as Record<string, unknown>) as unknown as NetworkConfig), name });
    }
    config.networks = selected;
  }
}

/** `patch` over `base`: plain objects merged key by key, anything else (arrays included) replaced. */
function deepMerge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const b = base[k];
    const plain = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
    out[k] = plain(b) && plain(v) ? deepMerge(b, v) : v;
  }
  return out;
}

function pick(obj: Record<string, unknown>, keys: Set<string>): Partial<GatewayConfig> {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => keys.has(k))) as Partial<GatewayConfig>;
}

function mergeEnv(config: GatewayConfig, env: Env, problems: string[]): void {
  const num = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === "") return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) problems.push(`${name}: "${v}" is not a number`);
    return n;
  };
  if (env.HOST) config.host = env.HOST;
  if (env.DATA_DIR) config.dataDir = env.DATA_DIR;
  if (env.LOG_LEVEL) config.logLevel = env.LOG_LEVEL as GatewayConfig["logLevel"];
  if (env.DATABASE_URL) config.databaseUrl = env.DATABASE_URL;
  config.portalKeysPerHour = num("PORTAL_KEYS_PER_HOUR") ?? config.portalKeysPerHour;
  if (env.REDIS_URL) config.redisUrl = env.REDIS_URL;
  if (env.MASTER_MNEMONIC) config.masterMnemonic = env.MASTER_MNEMONIC;
  config.stuckTransactionMs = num("STUCK_TRANSACTION_MS") ?? config.stuckTransactionMs;
  config.receiptWaitMs = num("RECEIPT_WAIT_MS") ?? config.receiptWaitMs;
  config.idempotencyStaleMs = num("IDEMPOTENCY_STALE_MS") ?? config.idempotencyStaleMs;
  config.journalRetentionDays = num("JOURNAL_RETENTION_DAYS") ?? config.journalRetentionDays;
  if (env.TRUSTED_PROXIES) config.trustedProxies = env.TRUSTED_PROXIES.split(",").map((s) => s.trim()).filter(Boolean);
  config.rateLimit = {
    ...config.rateLimit,
    requestsPerWindow: num("RATE_LIMIT") ?? config.rateLimit.requestsPerWindow,
    windowMs: num("RATE_LIMIT_WINDOW_MS") ?? config.rateLimit.windowMs,
    tryItOutRequestsPerWindow: num("TRY_IT_OUT_RATE_LIMIT") ?? config.rateLimit.tryItOutRequestsPerWindow,
    failMode: (env.RATE_LIMIT_FAIL_MODE as "open" | "closed" | undefined) ?? config.rateLimit.failMode,
  };
  config.bodyLimitBytes = num("BODY_LIMIT_BYTES") ?? config.bodyLimitBytes;
  config.maxIdleLanes = num("MAX_IDLE_LANES") ?? config.maxIdleLanes;
  const state = env.EMBEDDED_STATE;
  if (state === "true" || state === "1") config.embeddedState = true;
  else if (state === "false" || state === "0") config.embeddedState = false;
  else if (state !== undefined && state !== "") problems.push(`EMBEDDED_STATE: "${state}" is not true or false`);
  config.http = {
    headersTimeoutMs: num("HTTP_HEADERS_TIMEOUT_MS") ?? config.http.headersTimeoutMs,
    requestTimeoutMs: num("HTTP_REQUEST_TIMEOUT_MS") ?? config.http.requestTimeoutMs,
    keepAliveTimeoutMs: num("HTTP_KEEP_ALIVE_TIMEOUT_MS") ?? config.http.keepAliveTimeoutMs,
    maxConnections: num("HTTP_MAX_CONNECTIONS") ?? config.http.maxConnections,
  };
  const coalesce = env.COALESCE_READS;
  if (coalesce === "true" || coalesce === "1") config.coalesceReads = true;
  else if (coalesce === "false" || coalesce === "0") config.coalesceReads = false;
  else if (coalesce !== undefined && coalesce !== "") problems.push(`COALESCE_READS: "${coalesce}" is not true or false`);
  config.upstreamTimeoutMs = num("UPSTREAM_TIMEOUT_MS") ?? config.upstreamTimeoutMs;
  if (env.NETWORKS) {
    const names = env.NETWORKS.split(",").map((s) => s.trim()).filter(Boolean);
    const selected: NetworkConfig[] = [];
    for (const name of names) {
      if (name !== "testnet" && name !== "mainnet") problems.push(`NETWORKS: unknown network "${name}"`);
      else selected.push(config.networks.find((n) => n.name === name) ?? structuredClone(defaultNetworks[name]));
    }
    config.networks = selected;
  }
  for (const net of config.networks) {
    const prefix = net.name.toUpperCase();
    net.port = num(`${prefix}_PORT`) ?? net.port;
    net.blockTimeSeconds = num(`${prefix}_BLOCK_TIME`) ?? num("BLOCK_TIME") ?? net.blockTimeSeconds;
    const ups = env[`${prefix}_UPSTREAMS`];
    if (ups !== undefined) net.upstreams = ups.split(",").map((s) => s.trim()).filter(Boolean);
    const fee = env[`${prefix}_FEE_MODE`];
    if (fee !== undefined) net.feeMode = fee as FeeMode;
  }
}

/** Every problem with a config, as sentences naming the setting. Empty when valid. */
export function validateConfig(config: GatewayConfig): string[] {
  const problems: string[] = [];
  const positiveInt = (name: string, v: unknown): void => {
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) problems.push(`${name}: must be a positive integer, got ${JSON.stringify(v)}`);
  };
  if (typeof config.host !== "string" || config.host === "") problems.push("host: must be a non-empty string");
  positiveInt("bodyLimitBytes", config.bodyLimitBytes);
  positiveInt("maxBatchSize", config.maxBatchSize);
  if (typeof config.coalesceReads !== "boolean") problems.push(`coalesceReads: must be true or false, got ${JSON.stringify(config.coalesceReads)}`);
  positiveInt("upstreamTimeoutMs", config.upstreamTimeoutMs);
  positiveInt("upstreamProbeIntervalMs", config.upstreamProbeIntervalMs);
  positiveInt("portalKeysPerHour", config.portalKeysPerHour);
  positiveInt("stuckTransactionMs", config.stuckTransactionMs);
  positiveInt("receiptWaitMs", config.receiptWaitMs);
  positiveInt("idempotencyStaleMs", config.idempotencyStaleMs);
  if (typeof config.journalRetentionDays !== "number" || !Number.isInteger(config.journalRetentionDays) || config.journalRetentionDays < 0) {
    problems.push(`journalRetentionDays: must be a whole number of days (0 keeps everything), got ${JSON.stringify(config.journalRetentionDays)}`);
  }
  positiveInt("rateLimit.requestsPerWindow", config.rateLimit.requestsPerWindow);
  positiveInt("rateLimit.windowMs", config.rateLimit.windowMs);
  positiveInt("rateLimit.tryItOutRequestsPerWindow", config.rateLimit.tryItOutRequestsPerWindow);
  positiveInt("rateLimit.decisionTimeoutMs", config.rateLimit.decisionTimeoutMs);
  positiveInt("maxIdleLanes", config.maxIdleLanes);
  if (typeof config.embeddedState !== "boolean") problems.push(`embeddedState: must be true or false, got ${JSON.stringify(config.embeddedState)}`);
  for (const k of ["headersTimeoutMs", "requestTimeoutMs", "keepAliveTimeoutMs", "maxConnections"] as const) positiveInt(`http.${k}`, config.http?.[k]);
  if (config.rateLimit.failMode !== "open" && config.rateLimit.failMode !== "closed") problems.push(`rateLimit.failMode: must be "open" or "closed", got "${config.rateLimit.failMode}"`);
  if (config.redisUrl !== undefined && !/^rediss?:\/\//.test(config.redisUrl)) problems.push("redisUrl: must be a redis:// or rediss:// URL");
  if (!Array.isArray(config.trustedProxies)) problems.push("trustedProxies: must be a list of IP addresses");
  if (config.databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) problems.push("databaseUrl: must be a postgres:// or postgresql:// URL");
  if (!["debug", "info", "warn", "error", "silent"].includes(config.logLevel)) problems.push(`logLevel: must be debug, info, warn, error or silent, got "${config.logLevel}"`);
  if (config.networks.length === 0) problems.push("networks: at least one network must be enabled");
  const ports = new Map<number, string>();
  for (const net of config.networks) {
    const p = `networks.${net.name}`;
    positiveInt(`${p}.chainId`, net.chainId);
    if (!Number.isInteger(net.port) || net.port < 0 || net.port > 65535) problems.push(`${p}.port: must be 0..65535, got ${JSON.stringify(net.port)}`);
    else if (net.port !== 0) {
      const other = ports.get(net.port);
      if (other) problems.push(`${p}.port: ${net.port} is already used by ${other}`);
      ports.set(net.port, net.name);
    }
    if (!Array.isArray(net.upstreams)) problems.push(`${p}.upstreams: must be a list of URLs`);
    else
      for (const u of net.upstreams) {
        try {
          const url = new URL(u);
          if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)");
        } catch {
          problems.push(`${p}.upstreams: "${u}" is not an http(s) URL`);
        }
      }
    if (net.feeMode !== "zero" && net.feeMode !== "market") problems.push(`${p}.feeMode: must be "zero" or "market", got "${net.feeMode}"`);
    if (typeof net.blockTimeSeconds !== "number" || !(net.blockTimeSeconds > 0)) problems.push(`${p}.blockTimeSeconds: must be a positive number`);
    if (!/^0x[0-9a-fA-F]{40}$/.test(net.messageRecipient)) problems.push(`${p}.messageRecipient: must be a 0x-prefixed 20-byte address`);
    const v = net.validators as { source?: string; addresses?: unknown };
    if (!["static", "clique", "qbft", "coinbase"].includes(v?.source ?? "")) problems.push(`${p}.validators.source: must be static, clique, qbft or coinbase`);
    if (v?.source === "static" && (!Array.isArray(v.addresses) || !v.addresses.every((a) => typeof a === "string" && /^0x[0-9a-fA-F]{40}$/.test(a)))) {
      problems.push(`${p}.validators.addresses: a static validator set needs a list of 0x addresses`);
    }
    positiveInt(`${p}.activeValidatorWindowBlocks`, net.activeValidatorWindowBlocks);
    if (!Array.isArray(net.supportedTokens) || !net.supportedTokens.every((a) => typeof a === "string" && /^0x[0-9a-fA-F]{40}$/.test(a))) {
      problems.push(`${p}.supportedTokens: must be a list of 0x token addresses`);
    }
  }
  return problems;
}
