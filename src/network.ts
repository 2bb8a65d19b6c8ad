// One network's runtime: its upstreams (or embedded anvil), its cores, and its server on its own port.
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { GatewayConfig, NetworkConfig } from "./config/config.js";
import { startEmbeddedNode, type EmbeddedNode } from "./chain/embeddedNode.js";
import { boundedGetLogs } from "./rpc/boundedLogs.js";
import { registerFilterMethods } from "./rpc/filterMethods.js";
import { GatewayFilters } from "./live/gatewayFilters.js";
import { MethodWeights } from "./limits/methodWeights.js";
import { requireAllowedRawTarget } from "./keys/allowedTargets.js";
import { UpstreamPool } from "./chain/upstreamPool.js";
import { InflightReads } from "./rpc/inflightReads.js";
import { RpcCore } from "./rpc/rpcCore.js";
import { callGasCapOf } from "./rpc/callGasCapOf.js";
import { NodeShares } from "./limits/nodeShares.js";
import { ImmutableCache } from "./rpc/immutableCache.js";
import { GatewayError, type JsonValue } from "./errors.js";
import { Validators } from "./platform/validators.js";
import { SupportedTokens } from "./platform/supportedTokens.js";
import { Sponsorship } from "./platform/sponsorship.js";
import { TestFaucet } from "./platform/testFaucet.js";
import { registerPlatformMethods } from "./platform/platformMethods.js";

/** anvil's first dev account, made the embedded chain's block proposer (its coinbase). */
const DEV_VALIDATOR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
import type { Logger } from "./log/logger.js";
import type { MasterSeed } from "./keys/masterSeed.js";
import type { SubmissionStore } from "./store/submissionStore.js";
import { Sequencer } from "./sequencer/sequencer.js";
import { ZktCore } from "./zkt/zktCore.js";
import type { StoreHealth } from "./store/storeHealth.js";
import { chainGenesis } from "./chain/chainGenesis.js";
import type { SolidityCompiler } from "./zkt/solc/compileSolidity.js";
import { listenDual, type DualServer } from "./transport/http/listen.js";
import { withCors } from "./transport/http/cors.js";
import { KEYS_PATH } from "./transport/portal/portalRoutes.js";
import { createRestRouter, type RestRoute } from "./transport/http/restRouter.js";
import { healthRoutes } from "./transport/http/healthRoutes.js";
import { jsonRpcRoutes } from "./transport/jsonrpc/jsonRpcRoutes.js";
import { zktRoutes } from "./transport/zkt/zktRoutes.js";
import { connectRoutes } from "./transport/connect/routes.js";
import { errorMappingInterceptor } from "./transport/connect/errorMap.js";
import { andThen } from "./maybePromise.js";
import { callerGate } from "./transport/connect/callerGate.js";
import { withMediaTypeHint } from "./transport/connect/mediaType.js";
import { callerKey } from "./handlers/context.js";
import { createContextValues } from "@connectrpc/connect";
import type { RateLimits } from "./limits/rateLimits.js";
import { answerZeroFees } from "./rpc/zeroFees.js";
import { installMulticall3 } from "./platform/multicall3.js";
import { Policy, type Authenticate } from "./policy/policy.js";
import { admitEach, admissionGate, guard } from "./handlers/guard.js";
import { rpcHandlers } from "./handlers/rpcHandlers.js";
import { zktHandlers } from "./handlers/zktHandlers.js";
import { RpcService, type BatchRequest, type CallRequest } from "../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../gen/chaingateway/zkt/v1/zkt_pb.js";
import { AdminService } from "../gen/chaingateway/admin/v1/admin_pb.js";
import { WebhookService } from "../gen/chaingateway/webhooks/v1/webhooks_pb.js";
import { webhookHandlers } from "./handlers/webhookHandlers.js";
import { webhookRoutes } from "./transport/webhooks/webhookRoutes.js";
import { WebhookDispatcher } from "./webhooks/webhookDispatcher.js";
import { describeDelivery } from "./webhooks/webhookEvents.js";
import { WebhookRegistry } from "./webhooks/webhookRegistry.js";
import { LogEvents } from "./webhooks/logEvents.js";
import { WriteCallbacks } from "./webhooks/writeCallbacks.js";
import { PUBLIC_SIGNER_INDEX } from "./keys/masterSeed.js";
import type { WebhookStore } from "./store/webhookStore.js";
import { adminHandlers } from "./handlers/adminHandlers.js";
import type { ApiKeys } from "./keys/apiKeys.js";
import type { AdminTokens } from "./keys/adminTokens.js";
import { clientIp, trustedProxies } from "./transport/http/clientIp.js";
import type { IdempotencyStore } from "./store/idempotencyStore.js";
import type { Metrics } from "./metrics/metrics.js";
import type { HDNodeWallet } from "ethers";
import { HeadFeed } from "./live/headFeed.js";
import { upstreamHeads } from "./live/upstreamHeads.js";
import { type HubObserver, SubscriptionHub } from "./live/subscriptions.js";
import { webSocketEndpoint } from "./transport/websocket/webSocketEndpoint.js";
import { shardHost } from "./transport/websocket/shardHost.js";

export interface RunningNetwork {
  config: NetworkConfig;
  /** Base address, e.g. http://127.0.0.1:8545 */
  url: string;
  /** The node(s) behind it; the embedded anvil's URL when there is one. */
  upstreamUrls: string[];
  embedded: boolean;
  /** The embedded anvil's watchdog process (anvil is its child), when there is one. */
  embeddedPid?: number;
  core: RpcCore;
  zkt: ZktCore;
  pool: UpstreamPool;
  sequencer: Sequencer;
  /** Live subscriptions (WebSocket, Connect streams), on the network's one head feed. */
  hub: SubscriptionHub;
  /** The one follower of the chain behind every subscription (polls only while someone listens). */
  feed: HeadFeed;
  close(): Promise<void>;
}

export interface NetworkDeps {
  log: Logger;
  authenticate: Authenticate;
  seed: MasterSeed;
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
  walletByAddress: (address: string) => Promise<HDNodeWallet | undefined>;
  /** Awaited just before the port is opened: the gateway opens every network's port once all are ready. */
  beforeListen?: () => Promise<void>;
}

export async function startNetwork(gw: GatewayConfig, net: NetworkConfig, deps: NetworkDeps): Promise<RunningNetwork> {
  const log = deps.log.child({ network: net.name });
  let embedded: EmbeddedNode | undefined;
  let server: DualServer | undefined;
  let pool: UpstreamPool | undefined;
  let sequencer: Sequencer | undefined;
  try {
    if (net.upstreams.length === 0) {
      embedded = await startEmbeddedNode({
        chainId: net.chainId,
        blockTimeSeconds: net.blockTimeSeconds,
        feeMode: net.feeMode,
        ...(net.embeddedNodePort ? { port: net.embeddedNodePort } : {}),
        // The dev chain survives restarts (contracts, balances, queueIds); delete the file for a fresh one.
        ...(gw.embeddedState ? { stateFile: join(gw.dataDir, `chain-${net.name}.json`) } : {}),
        onStateRestored: ({ restored, tornAside }) =>
          log.error(
            restored === "copy"
              ? "the dev chain's state file was torn (a crash while anvil wrote it): started on its last whole copy, a few seconds older"
              : "the dev chain's state file was torn (a crash while anvil wrote it) and no whole copy exists: started a new chain",
            { tornAside },
          ),
        onCopyFailed: (err) => log.warn("could not keep a whole copy of the dev chain's state", { error: err.message }),
      });
      log.info("embedded anvil started", { chainId: net.chainId, blockTime: net.blockTimeSeconds, pid: embedded.pid });
    }
    const upstreamUrls = embedded ? [embedded.url] : net.upstreams;
    const m = deps.metrics;
    pool = new UpstreamPool({
      observer: {
        latency: (upstream, seconds) => m.observeUpstream(net.name, upstream, seconds),
        health: (upstream, healthy) => m.upstreamHealthy.set({ network: net.name, upstream }, healthy ? 1 : 0),
        routing: (upstream, f) => {
          m.upstreamLag.set({ network: net.name, upstream }, f.lag);
          m.upstreamScore.set({ network: net.name, upstream }, f.score);
          m.upstreamCircuitOpen.set({ network: net.name, upstream }, f.open ? 1 : 0);
        },
        hedge: (won) => m.upstreamHedges.inc({ network: net.name, outcome: won ? "won" : "lost" }),
        integrity: (check, corrected) => m.upstreamIntegrity.inc({ network: net.name, check, outcome: corrected ? "corrected" : "unresolved" }),
      },
      routing: net.routing,
      urls: upstreamUrls,
      chainId: net.chainId,
      timeoutMs: gw.upstreamTimeoutMs,
      maxAnswerBytes: gw.upstreamMaxAnswerBytes,
      probeIntervalMs: gw.upstreamProbeIntervalMs,
      probeTimeoutMs: gw.upstreamProbeTimeoutMs,
      batchReads: gw.batchUpstreamReads,
      log,
    });
    // Pinned before the first probe, so a node on another genesis is out from the start (chainGenesis.ts).
    const pinnedGenesis = embedded ? undefined : (net.genesis ?? (await deps.store.pinnedGenesis(net.name)));
    if (pinnedGenesis) pool.expectGenesis(pinnedGenesis);
    await pool.start();
    if (!pool.ready) log.warn("no upstream is reachable yet; serving anyway, readiness is false", { upstreams: pool.health() });
    const limits = deps.limits;
    const cache = new ImmutableCache({ maxEntries: 10_000, confirmations: net.cacheConfirmations });
    // Set below, once the sequencer exists: its follower watches the probes' heads for a node going back.
    let followHead: ((head: string) => void) | undefined;
    pool.onHead = (head) => {
      cache.observeHead(head);
      followHead?.(head);
    };
    const core = new RpcCore(
      pool,
      net.chainId,
      (ctx) => limits.checkTransaction(ctx.access),
      cache,
      (method, outcome) =>
        // Unknown methods share one label: clients choose method names, the label set must stay bounded.
        m.countRpc(net.name, outcome.ok || outcome.error.kind !== "method_not_found" ? method : "other", outcome.ok ? "ok" : String(outcome.error.jsonRpcCode)),
      gw.coalesceReads ? new InflightReads() : undefined,
    );
    if (net.feeMode === "zero") answerZeroFees(core, pool);
    const nodeShares = new NodeShares({
      perCaller: gw.nodeSharePerCaller,
      queuePerCaller: gw.nodeQueuePerCaller,
      refused: () => m.nodeShareRefusals.inc({ network: net.name }),
    });
    core.boundNodeWork(await callGasCapOf(net, pool), nodeShares);
    const trusted = trustedProxies(gw.trustedProxies);
    // The journal is keyed by network *and* chain (its genesis): a fresh embedded anvil is a new chain, and
    // what was journaled for the old one must not be replayed onto it.
    const genesisHash = await chainGenesis({
      pool,
      store: deps.store,
      network: net.name,
      pinned: embedded ? undefined : await deps.store.pinnedGenesis(net.name),
      configured: net.genesis,
      ownChain: embedded !== undefined,
      continued: embedded?.continued ?? false,
      log,
    });
    const journalNetwork = `${net.name}:${genesisHash.slice(0, 18)}`;
    // From now on an upstream on another genesis (a node restarted on a fresh chain) is out of service. Not the
    // gateway's own node: it is this chain whatever block 0 it reports after loading its state (chainGenesis.ts).
    if (!embedded) pool.expectGenesis(genesisHash);
    const headsWs = net.headsWebSocket ?? (embedded ? embedded.url.replace(/^http/, "ws") : undefined);
    sequencer = new Sequencer({
      network: journalNetwork,
      chainId: net.chainId,
      feeMode: net.feeMode,
      pool,
      store: deps.store,
      log,
      receiptPollMs: Math.max(50, Math.round((net.blockTimeSeconds * 1000) / 2)),
      confirmations: net.cacheConfirmations,
      ...(embedded ? {} : { genesisHash }),
      devFunding: embedded !== undefined && net.feeMode === "market",
      creditFeeDust: embedded !== undefined && net.feeMode === "zero",
      stuckAfterMs: gw.stuckTransactionMs,
      droppedAfterMs: gw.droppedSendMs,
      maxIdleLanes: gw.maxIdleLanes,
      observer: {
        queueDepth: (n) => m.sequencerQueueDepth.set({ network: net.name }, n),
        retry: () => m.broadcastRetries.inc({ network: net.name }),
        stuckLanes: (n) => m.stuckLanes.set({ network: net.name }, n),
        reopened: (n) => m.writesReopened.inc({ network: net.name }, n),
      },
      walletFor: deps.walletByAddress,
      ...(headsWs
        ? { headWakeups: upstreamHeads(headsWs, (err) => log.debug("the node's heads WebSocket failed; the follower polls", { error: err.message })) }
        : {}),
    });
    const seq = sequencer;
    followHead = (head) => seq.follower.observeHead(head);
    m.followSequencer(net.name, () => seq.stats());
    // Keyed raw transactions go through the journal too: accepted once, never lost, never sent twice.
    core.register("eth_sendRawTransaction", async (ctx, params) => {
      if (params.length !== 1 || typeof params[0] !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(params[0])) {
        throw new GatewayError("invalid_params", "Invalid params: eth_sendRawTransaction takes one 0x-hex signed transaction");
      }
      requireAllowedRawTarget(ctx.access, params[0]);
      return seq.submitRaw(params[0]);
    });
    await sequencer.start();
    const validators = new Validators(pool, { config: net.validators, activeWindowBlocks: net.activeValidatorWindowBlocks });
    const tokens = new SupportedTokens(pool, log);
    await tokens.addConfigured(net.supportedTokens);
    if (embedded) {
      // A dev chain gets a real validator address and a real token out of the box.
      await pool.call("anvil_setCoinbase", [DEV_VALIDATOR]);
      await Promise.all([tokens.deployDemoToken(embedded.url, net.chainId), installMulticall3(embedded.url, net.chainId)]);
    }
    const sponsorship = new Sponsorship({ pool, sequencer, seed: deps.seed, chainId: net.chainId });
    registerPlatformMethods(core, { validators, tokens, sponsorship });
    // Bounded before a node is asked (rpc/boundedLogs.ts).
    const logsPool = pool;
    const logsNode = { call: (method: string, params: JsonValue[]) => logsPool.call(method, params), head: () => logsPool.head };
    const logBounds = { maxBlockRange: gw.logsMaxBlockRange, maxResults: gw.logsMaxResults };
    const getLogs = boundedGetLogs(logsNode, logBounds);
    core.register("eth_getLogs", getLogs);
    // Webhooks (#56): the journal writes an event's outbox rows with its status change and says so; this
    // network's dispatcher sends them.
    const webhooks = new WebhookDispatcher({
      network: net.name,
      store: deps.webhookStore,
      describe: (d) =>
        describeDelivery(d, {
          journal: deps.store,
          abiOf: (queueId) => deps.webhookStore.abiOf(queueId),
          call: (method, params) => pool!.call(method, params),
        }),
      allowPrivate: gw.webhooks.allowPrivate,
      // Alone on its store, this process's own writes wake the dispatcher; a slow look besides, should a claim
      // have failed (a full disk) with nothing written since to wake it.
      pollMs: deps.sharedStore ? 500 : 30_000,
      maxRetryMs: gw.webhooks.maxRetryMs,
      giveUpMs: gw.webhooks.giveUpMs,
      eventsPerSecond: gw.webhooks.eventsPerSecond,
      log,
      observer: { attempt: (outcome) => m.webhookAttempts.inc({ network: net.name, outcome }) },
    });
    const wakeWebhooks = () => webhooks.wake();
    deps.store.outboxListeners?.add(wakeWebhooks);
    webhooks.wake();
    const callbacks = new WriteCallbacks({
      network: net.name,
      store: deps.webhookStore,
      journal: deps.store,
      allowPrivate: gw.webhooks.allowPrivate,
      walletOf: (access) => deps.seed.wallet(access.walletIndex).address,
      seedSecret: deps.seed.wallet(PUBLIC_SIGNER_INDEX).privateKey,
      written: wakeWebhooks,
    });
    const zkt = new ZktCore({
      network: net,
      journalNetwork,
      pool,
      sequencer,
      store: deps.store,
      seed: deps.seed,
      compiler: deps.compiler,
      waitTimeoutMs: gw.receiptWaitMs,
      callbacks,
    });
    // One follower of the chain for every live subscriber; it polls only while someone subscribes, and reads
    // at once when the node's own WebSocket announces a head (the embedded anvil's, or headsWebSocket).
    const feed = new HeadFeed(pool, {
      pollMs: gw.websocket.headPollMs ?? Math.max(50, Math.min(1_000, Math.round(net.blockTimeSeconds * 500))),
      onError: (err) => log.debug("head feed poll failed; retried next poll", { error: err.message }),
      ...(headsWs
        ? { wakeups: upstreamHeads(headsWs, (err) => log.debug("the node's heads WebSocket failed; polling meanwhile", { error: err.message })) }
        : {}),
    });
    const hubObserver: HubObserver = {
      subscriptions: (kind, delta) => m.subscriptions.inc({ network: net.name, kind }, delta),
      notified: (kind, n) => n > 0 && m.notifications.inc({ network: net.name, kind }, n),
    };
    const hub = new SubscriptionHub(feed, hubObserver);
    const logEvents = new LogEvents({ network: net.name, hub, store: deps.webhookStore, log, written: wakeWebhooks, refreshMs: deps.sharedStore ? 5_000 : 0 });
    void logEvents.refresh();
    const registry = new WebhookRegistry(deps.webhookStore, gw.webhooks, () => {
      wakeWebhooks();
      void logEvents.refresh();
    });
    // Filters are the gateway's, on the same feed, so they work whichever node answers (live/gatewayFilters.ts).
    const filters = new GatewayFilters(hub, (filter, signal) => getLogs({ access: { kind: "public" }, ...(signal ? { signal } : {}) }, [filter]), {
      idleMs: gw.filterIdleMs,
      perCaller: gw.filtersPerCaller,
      maxBacklog: 10_000,
    });
    registerFilterMethods(core, filters, logsNode, logBounds);
    // One policy for every transport (policy/operations.ts), applied around the handlers by the guard; the
    // REST, JSON-RPC and WebSocket adapters call the same guarded handlers in process.
    const weights = new MethodWeights(gw.methodWeights);
    const policy = new Policy({
      network: net.name,
      authenticate: deps.authenticate,
      adminTokens: deps.adminTokens,
      limits,
      idempotency: deps.idempotency,
    });
    const handlers = {
      // A call counts its method's units (METHOD_WEIGHTS; 1 unless weighed), a batch the sum of its calls'.
      rpc: guard(
        RpcService,
        rpcHandlers(core, gw.maxBatchSize, sponsorship, hub, embedded ? new TestFaucet(pool) : undefined, (access) => limits.usageOf(net.name, access)),
        policy,
        (method, req) =>
          method === "Batch"
            ? weights.uniform
              ? Math.max(1, (req as BatchRequest).calls.length)
              : weights.sum((req as BatchRequest).calls.map((c) => c.method))
            : method === "Call"
              ? weights.of((req as CallRequest).method)
              : 1,
      ),
      zkt: guard(ZktService, zktHandlers(zkt, hub), policy),
      webhooks: guard(
        WebhookService,
        webhookHandlers(
          registry,
          net.name,
          (access) => deps.seed.wallet(access.walletIndex).address,
          (keyId) => callbacks.secretOf(keyId),
        ),
        policy,
      ),
      admin: deps.adminTokens.enabled
        ? guard(
            AdminService,
            adminHandlers({
              network: net.name,
              keys: deps.keys,
              pool,
              sequencer,
              usageOf: (access) => limits.usageOf(net.name, access),
              stuckAfterMs: gw.stuckTransactionMs,
              log,
            }),
            policy,
          )
        : undefined,
      admitReflection: admitEach(policy, "ServerReflection.ServerReflectionInfo"),
    };
    const socketLimits = { ...gw.websocket, maxPayloadBytes: gw.bodyLimitBytes };
    const shardCount = gw.websocket.shards ?? Math.max(0, Math.min(8, availableParallelism() - 1));
    const sockets = webSocketEndpoint({
      rpc: handlers.rpc,
      hub,
      policy,
      maxBatchSize: gw.maxBatchSize,
      limits: socketLimits,
      shards:
        shardCount > 0
          ? {
              socketsInProcess: gw.websocket.socketsInProcess,
              hosts: (events) =>
                Array.from({ length: shardCount }, () =>
                  shardHost({ settings: { limits: socketLimits, logLevel: gw.logLevel, network: net.name }, feed, observer: hubObserver, log }, events),
                ),
            }
          : undefined,
      trustedProxies: trusted,
      log,
      observer: {
        sockets: (delta) => m.webSockets.inc({ network: net.name }, delta),
        slowConsumerClosed: () => m.slowConsumerCloses.inc({ network: net.name }),
      },
    });
    let draining = false;
    const rest = createRestRouter(
      [
        ...healthRoutes(pool, deps.storeHealth, () => draining),
        {
          method: "GET",
          pattern: /^\/metrics$/,
          renderError: () => ({ status: 500 }),
          handle: async () => ({ status: 200, body: await m.text(), contentType: "text/plain; version=0.0.4" }),
        },
        ...jsonRpcRoutes({
          maxBatchSize: gw.maxBatchSize,
          rpc: handlers.rpc,
          admitMalformed: (caller, weight) => policy.admitUnhandled(caller, weight),
          refuseEarly: (caller) => policy.refusedBeforeBody(caller),
        }),
        ...zktRoutes({
          zkt: handlers.zkt,
          log,
          refuseEarly: (caller) => policy.refusedBeforeBody(caller, true),
          admitRefused: (caller) => policy.admit("ZktService.WriteMessage", caller),
        }),
        ...webhookRoutes({ webhooks: handlers.webhooks, admitMalformed: (caller, weight) => policy.admitUnhandled(caller, weight) }),
        ...deps.sharedRoutes,
      ],
      gw.bodyLimitBytes,
      log,
      trusted,
      (route, status) => m.countHttp(net.name, route, status),
      (ip) => andThen(policy.admitUnhandled({ clientIp: ip }), (a) => a.headers),
    );
    const handler = connectNodeAdapter({
      routes: connectRoutes(handlers),
      fallback: rest.nodeHandler,
      readMaxBytes: gw.bodyLimitBytes,
      // What handlers throw, mapped once (the gate maps its own refusals).
      interceptors: [errorMappingInterceptor],
      // Before the body is read: who called, and one request of theirs admitted.
      requestGate: callerGate(admissionGate(policy)),
      contextValues: (req) => createContextValues().set(callerKey, { clientIp: clientIp(req.socket?.remoteAddress, req.headers["x-forwarded-for"], trusted) }),
    });
    // POSTs to REST routes (JSON-RPC, ZKT) over HTTP/1.1 take the fast lane; the same router answers them.
    await deps.beforeListen?.();
    server = await listenDual(
      withCors(withMediaTypeHint(handler), new Map([[KEYS_PATH, new Set(gw.portalKeyOrigins)]])),
      gw.host,
      net.port,
      { ...gw.http, exempt: trusted, heldElsewhere: () => sockets.onShards },
      {
        serves: rest.serves,
        handle: rest.handle,
        bodyLimitBytes: gw.bodyLimitBytes,
      },
      sockets.upgrade,
      {
        h2Banned: (reason) => m.h2Bans.inc({ network: net.name, reason }),
        refusedAtAccept: () => m.refusedAtAccept.inc({ network: net.name }),
      },
    );
    const url = `http://${gw.host}:${server.port}`;
    const srv = server;
    const p = pool;
    const s = sequencer;
    return {
      config: net,
      url,
      upstreamUrls,
      embedded: embedded !== undefined,
      ...(embedded ? { embeddedPid: embedded.pid } : {}),
      core,
      zkt,
      pool,
      sequencer,
      hub,
      feed,
      async close() {
        // Readiness goes false first, so balancers stop sending; then in-flight broadcasts finish.
        draining = true;
        await s.drain();
        await sockets.close();
        filters.close();
        nodeShares.stop();
        deps.store.outboxListeners?.delete(wakeWebhooks);
        logEvents.stop();
        await webhooks.stop();
        feed.stop();
        await srv.close();
        s.stop();
        p.stop();
        await embedded?.stop();
      },
    };
  } catch (err) {
    await server?.close();
    sequencer?.stop();
    pool?.stop();
    await embedded?.stop();
    throw err;
  }
}
