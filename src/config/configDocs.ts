// Documentation of every setting, typed against the config so a new setting cannot go undocumented
// (`npm run docs:config` turns it into docs/CONFIG.md).
import type { GatewayConfig, NetworkConfig } from "./config.js";

type Doc = { env?: string; text: string };

export const gatewaySettings: Record<keyof GatewayConfig, Doc> = {
  host: { env: "HOST", text: "Interface every network's port binds to." },
  dataDir: { env: "DATA_DIR", text: "Where the embedded store (one SQLite file: the journal, keys and idempotency answers) and the generated master seed live." },
  bodyLimitBytes: { env: "BODY_LIMIT_BYTES", text: "Largest accepted request body on every endpoint (413 beyond)." },
  maxBatchSize: { text: "Most requests in one JSON-RPC batch (-32600 beyond)." },
  coalesceReads: { env: "COALESCE_READS", text: "true: an upstream read (eth_blockNumber, eth_call, eth_getBalance, …) identical to one already in flight waits for that one's answer instead of sending its own; false: every call goes upstream." },
  upstreamTimeoutMs: { env: "UPSTREAM_TIMEOUT_MS", text: "Per-request upstream timeout before failing over." },
  upstreamProbeIntervalMs: { text: "How often upstream health (and the chain head) is probed." },
  logLevel: { env: "LOG_LEVEL", text: "debug, info, warn, error or silent." },
  databaseUrl: { env: "DATABASE_URL", text: "PostgreSQL for keys, journal, nonce lanes and idempotency; the embedded store under dataDir when unset." },
  portalKeysPerHour: { env: "PORTAL_KEYS_PER_HOUR", text: "Keys POST /portal/keys issues per client IP per hour." },
  rateLimit: { env: "RATE_LIMIT, RATE_LIMIT_WINDOW_MS, TRY_IT_OUT_RATE_LIMIT, RATE_LIMIT_FAIL_MODE", text: "requestsPerWindow per caller per windowMs (a batch of n counts n); tryItOutRequestsPerWindow per IP; failMode open/closed when Redis is unreachable; decisionTimeoutMs before that policy applies; keyPrefix of the Redis keys." },
  embeddedState: { env: "EMBEDDED_STATE", text: "true (default): an embedded dev chain keeps its state in dataDir/chain-<network>.json across restarts (dumped every 2 s and on exit); delete that file, or set false, for a fresh chain at each start (and for load tests: each dump holds the whole history)." },
  maxIdleLanes: { env: "MAX_IDLE_LANES", text: "Signers' nonce lanes (with their wallets) kept in memory while idle, per network; past it the least recently used idle ones are dropped and made again from the chain on their next write (a public service issues keys to anyone)." },
  http: { env: "HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS, HTTP_MAX_CONNECTIONS", text: "Bounds on every client connection: headersTimeoutMs (the first bytes and the request head; 408 or close after, default 60 s), requestTimeoutMs (the whole request, 300 s), keepAliveTimeoutMs (idle HTTP/1.1 and h2 connections, 65 s), maxConnections per network port (past it new connections get 503 and are closed, 10,000)." },
  redisUrl: { env: "REDIS_URL", text: "Redis shared by replicas for rate limits (bottleneck clustering); in-process when unset." },
  trustedProxies: { env: "TRUSTED_PROXIES", text: "Proxy IPs whose X-Forwarded-For is believed." },
  masterMnemonic: { env: "MASTER_MNEMONIC", text: "BIP-39 phrase every gateway wallet derives from; generated into dataDir/master-seed when unset. Replicas must share it." },
  stuckTransactionMs: { env: "STUCK_TRANSACTION_MS", text: "A broadcast transaction unmined this long is sent again; on fee networks it is first replaced with +12.5 % fees (at most 3 times)." },
  receiptWaitMs: { env: "RECEIPT_WAIT_MS", text: "A ZKT write with wait (and a deploy) not mined within this long is answered 503 UPSTREAM_UNAVAILABLE with its queueId; it stays journaled and is still sent." },
  idempotencyStaleMs: { env: "IDEMPOTENCY_STALE_MS", text: "An Idempotency-Key claim with no answer this long was left by a gateway that stopped mid-request: a retry is told where its journaled write is, or runs if nothing was journaled. Keep it above the longest request (RECEIPT_WAIT_MS plus a compile)." },
  journalRetentionDays: { env: "JOURNAL_RETENTION_DAYS", text: "Mined or failed submissions created more than this many days ago are deleted from the journal (hourly); their status then answers 404. Unfinished ones are never deleted. 0 keeps everything." },
  networks: { env: "NETWORKS", text: "The networks to serve (testnet, mainnet); see the per-network settings below." },
};

export const networkSettings: Record<keyof NetworkConfig, Doc> = {
  name: { text: "testnet or mainnet." },
  chainId: { text: "The network's chain id (20180427 / 101010)." },
  port: { env: "TESTNET_PORT / MAINNET_PORT", text: "Port of the network's base address; 0 picks a free one." },
  upstreams: { env: "TESTNET_UPSTREAMS / MAINNET_UPSTREAMS", text: "Node URLs (comma list in env); empty starts an embedded anvil." },
  feeMode: { env: "TESTNET_FEE_MODE / MAINNET_FEE_MODE", text: "zero (gas price 0) or market (EIP-1559)." },
  blockTimeSeconds: { env: "BLOCK_TIME, TESTNET_BLOCK_TIME / MAINNET_BLOCK_TIME", text: "Embedded anvil's interval-mining period." },
  messageRecipient: { text: "Where ZKT V1 messages are sent." },
  evmVersion: { text: "solc evmVersion for ZKT deploys." },
  validators: { text: 'Validator source: {"source": "static", "addresses": [...]}, {"source": "clique"}, {"source": "qbft"} or {"source": "coinbase"}.' },
  activeValidatorWindowBlocks: { text: "Active validators proposed one of this many latest blocks." },
  supportedTokens: { text: "Token contracts platform_getSupportedTokens lists." },
  cacheConfirmations: { text: "Blocks this deep are final for the read cache." },
};
