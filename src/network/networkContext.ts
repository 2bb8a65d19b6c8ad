// What every part of a network's runtime is built from: the configuration, the gateway's shared services, a
// logger, and the stack each part pushes its teardown on (closed in reverse: the last part built goes first).
import type { TxSigner } from "../sequencer/txSigner.js";
import type { GatewayConfig, NetworkConfig } from "../config/config.js";
import type { ReloadApplier, ReloadOutcome } from "../config/reload.js";
import type { AdminTokens } from "../keys/adminTokens.js";
import type { ApiKeys } from "../keys/apiKeys.js";
import type { Wallets } from "../keys/custody/wallets.js";
import type { RateLimits } from "../limits/rateLimits.js";
import type { Logger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Authenticate } from "../policy/policy.js";
import type { IdempotencyStore } from "../store/idempotencyStore.js";
import type { StoreHealth } from "../store/storeHealth.js";
import type { SubmissionStore } from "../store/submissionStore.js";
import type { WebhookStore } from "../store/webhookStore.js";
import type { RestRoute } from "../transport/http/restRouter.js";
import type { SolidityCompiler } from "../zkt/solc/compileSolidity.js";

export interface NetworkDeps {
  log: Logger;
  authenticate: Authenticate;
  wallets: Wallets;
  store: SubmissionStore;
  /** Whether the store takes writes (readiness). */
  storeHealth: StoreHealth;
  compiler: SolidityCompiler;
  /** Gateway-wide routes served on every network's port (the portal). */
  sharedRoutes: RestRoute[];
  limits: RateLimits;
  /** The API keys (the admin API lists, issues, revokes and limits them). */
  keys: ApiKeys;
  /** ADMIN_TOKEN's tokens: the admin API is served when there are any. */
  adminTokens: AdminTokens;
  /** Webhook endpoints and their outbox (in the journal's database). */
  webhookStore: WebhookStore;
  /** The store is shared with other replicas (PostgreSQL): what they write is looked for by polling. */
  sharedStore: boolean;
  idempotency: IdempotencyStore;
  metrics: Metrics;
  /** Finds a gateway-held wallet by address (refills and fee bumps after a restart). */
  walletByAddress: (address: string) => Promise<TxSigner | undefined>;
  /** Awaited just before the port is opened: the gateway opens every network's port once all are ready. */
  beforeListen?: () => Promise<void>;
  /** Registers what a part applies when the configuration is reloaded (its live settings). */
  onReload?: (apply: ReloadApplier) => void;
  /** Reloads the configuration (the admin API's ReloadConfig). */
  reload?: () => ReloadOutcome;
}

export interface NetworkContext {
  gw: GatewayConfig;
  net: NetworkConfig;
  deps: NetworkDeps;
  log: Logger;
  /** Teardown, last in first out (AsyncDisposableStack): also what a failed start unwinds. */
  stack: AsyncDisposableStack;
}
