// The whole gateway: the store, keys and signers shared by every configured network, each network started
// on its own port, all stopped together.
import type { GatewayConfig, ParsedConfig } from "./config/config.js";
import { createLogger, type Logger } from "./log/logger.js";
import { startNetwork, type RunningNetwork } from "./network.js";
import { barrier } from "./barrier.js";
import { openWallets } from "./keys/custody/openWallets.js";
import { PUBLIC_SIGNER_INDEX } from "./keys/custody/wallets.js";
import { ApiKeys } from "./keys/apiKeys.js";
import { AdminTokens } from "./keys/adminTokens.js";
import { openStores, type OpenStoresOptions, type Stores } from "./store/openStores.js";
import { SolidityCompiler } from "./zkt/solc/compileSolidity.js";
import { WindowLimiter } from "./limits/windowLimiter.js";
import { KeyIssuer } from "./keys/keyIssuer.js";
import { portalRoutes } from "./transport/portal/portalRoutes.js";
import { RateLimits } from "./limits/rateLimits.js";
import { IdempotencyStore } from "./store/idempotencyStore.js";
import { startHousekeeping } from "./store/housekeeping.js";
import { startTrimming } from "./memory/trimFreed.js";
import { ConfigReloader, keyedConfig, type ReloadOutcome } from "./config/reload.js";
import { Metrics } from "./metrics/metrics.js";
import { type HeldPorts, holdPorts } from "./transport/holdingServer.js";
import { type MetricsServer, serveMetrics } from "./transport/http/metricsServer.js";

export interface Gateway {
  networks: RunningNetwork[];
  /** Address of the shared try-it-out signer (the same on every network). */
  publicSignerAddress: string;
  keys: ApiKeys;
  /** Where GET /metrics is served when METRICS_PORT is set (else on every network's port). */
  metricsUrl?: string;
  network(name: string): RunningNetwork;
  /** Reads the configuration again and applies what can change live (SIGHUP, AdminService.ReloadConfig). */
  reload(): ReloadOutcome;
  close(): Promise<void>;
}

export interface GatewayDeps {
  log?: Logger;
  /** Reads the configuration again (the file and the environment) for a reload; without it, reload refuses. */
  rereadConfig?: () => ParsedConfig;
}

export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const log = deps.log ?? createLogger(config.logLevel);
  const networks: RunningNetwork[] = [];
  const compiler = new SolidityCompiler(config.compiler);
  const issueLimiter = new WindowLimiter({ limit: Math.max(1, config.portalKeysPerHour), windowMs: 3_600_000 });
  const metrics = new Metrics();
  const reloader = new ConfigReloader(keyedConfig(config), deps.rereadConfig, (outcome) => metrics.countReload(outcome));
  const limits = new RateLimits(
    { ...config.rateLimit, ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}), storeProbe: config.resilience.rateLimitStoreProbe },
    log,
    (network, scope) => metrics.rateLimitRejections.inc({ network, scope }),
  );
  let stores: Stores | undefined;
  let stopHousekeeping: (() => void) | undefined;
  const stopTrimming = startTrimming(config.memoryTrimMs, log);
  let held: HeldPorts | undefined;
  let metricsServer: MetricsServer | undefined;
  /** What the start waits for, for the held ports' /readyz. */
  let startingFor = "opening its store";
  const closeAll = async (): Promise<void> => {
    for (const stop of [stopHousekeeping, stopTrimming]) stop?.();
    await held?.close();
    await metricsServer?.close();
    await Promise.all(networks.map((n) => n.close()));
    await compiler.close();
    await issueLimiter.close();
    await limits.close();
    await stores?.close();
  };
  try {
    // Alive and not ready while it starts (PostgreSQL or a first node may be waited for): holdingServer.ts.
    held = await holdPorts(
      config.host,
      config.networks.map((n) => n.port),
      () => startingFor,
    );
    // Embedded: one SQLite file under DATA_DIR; with DATABASE_URL, PostgreSQL (see openStores.ts).
    stores = await openStores(storeOptions(config, log, (what) => (startingFor = what)));
    startingFor = "starting its networks";
    const { journal, health: storeHealth, webhooks: webhookStore, kind: storeKind } = stores;
    metrics.followHealth(() => ({ storeKind, store: storeHealth.available, rateLimitStore: limits.sharedStoreUp }));
    startingFor = "opening its wallets";
    const wallets = await openWallets(config, log, stores);
    const keys = new ApiKeys(stores.keys, wallets);
    // A claim left by a stopped process is settled from the journal (IdempotencyStore.settleStale).
    const idempotency = new IdempotencyStore(stores.idempotency, {
      findJournaled: (key) => journal.getByIdempotencyKey(key),
      staleAfterMs: config.idempotencyStaleMs,
      pollMs: config.resilience.idempotencyPollMs,
    });
    stopHousekeeping = startHousekeeping({
      idempotency,
      journal,
      webhooks: webhookStore,
      retention: () => ({ journalDays: config.journalRetentionDays, deliveriesMs: config.webhooks.deliveryRetentionMs }),
      log,
    });
    const keyOrigins = new Set(config.portalKeyOrigins);
    reloader.onReload((next) => {
      // Read where used (the webhook registry, write callbacks, the journal prune): the object itself updated.
      Object.assign(config.webhooks, next.webhooks);
      keyOrigins.clear();
      for (const origin of next.portalKeyOrigins) keyOrigins.add(origin);
      log.setLevel?.(next.logLevel);
    });
    const sharedRoutes = portalRoutes({
      issuer: new KeyIssuer(keys, issueLimiter, config.portalKeysPerHour > 0),
      baseUrls: () => Object.fromEntries(networks.map((n) => [n.config.name, n.url])),
      keyOrigins,
    });
    const authenticate = (apiKey: string) => keys.authenticate(apiKey);
    reloader.onReload((next) => limits.reconfigure(next.rateLimit));
    const adminTokens = new AdminTokens(config.adminTokens);
    if (adminTokens.enabled) log.info("admin API served (ADMIN_TOKEN)", { tokens: config.adminTokens.length });
    // Together, and every port opens only once all networks are ready: one after the other, one network
    // answered while another's port still refused. A network that fails before that stops the others' starts;
    // every one that started is closed again (closeAll).
    const ready = barrier(config.networks.length);
    const started = await Promise.allSettled(
      config.networks.map((net) =>
        startNetwork(config, net, {
          log,
          authenticate,
          wallets,
          store: journal,
          storeHealth,
          compiler,
          sharedRoutes,
          limits,
          keys,
          adminTokens,
          webhookStore,
          sharedStore: storeKind === "postgres",
          idempotency,
          metrics,
          walletByAddress: (a) => keys.walletByAddress(a),
          onReload: (apply) => reloader.onReload(apply),
          reload: () => reloader.reload(),
          // The held ports are let go together, once every network is ready to take its own.
          beforeListen: async () => {
            await ready.arrive();
            await held?.close();
          },
        }).catch((err: unknown) => {
          ready.abort(err);
          throw err;
        }),
      ),
    );
    for (const s of started) if (s.status === "fulfilled") networks.push(s.value);
    const failure = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failure) throw failure.reason;
    const metricsHost = config.metricsHost ?? config.host;
    if (config.metricsPort !== undefined) metricsServer = await serveMetrics(metricsHost, config.metricsPort, () => metrics.text());
    return {
      ...(metricsServer ? { metricsUrl: `http://${metricsHost.includes(":") ? `[${metricsHost}]` : metricsHost}:${metricsServer.port}/metrics` } : {}),
      networks,
      publicSignerAddress: wallets.signer(PUBLIC_SIGNER_INDEX).address,
      keys,
      network(name) {
        const n = networks.find((x) => x.config.name === name);
        if (!n) throw new Error(`network ${name} is not running`);
        return n;
      },
      reload: () => {
        const outcome = reloader.reload();
        log.info("configuration reloaded", { changed: outcome.changed });
        return outcome;
      },
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Embedded: one SQLite file under DATA_DIR; with DATABASE_URL, PostgreSQL (openStores.ts), its waits logged. */
function storeOptions(config: GatewayConfig, log: Logger, waitingFor: (what: string) => void): OpenStoresOptions {
  return {
    dataDir: config.dataDir,
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    onChange: (what, details) => log.info(what, details),
    onWait: (what, details) => {
      waitingFor(`${what}: ${String(details.error ?? "")}`);
      log.warn(what, details);
    },
    onAvailability: (available, reason) =>
      available ? log.info("the store is available again") : log.error("the store is unavailable: writes are refused (503) and readiness is false", { reason }),
  };
}
