// A network's edge: its port (HTTP/1.1 and HTTP/2, the fast lane), Connect over the guarded handlers, the REST
// routes (health, metrics, JSON-RPC, ZKT, webhooks, the portal) and WebSockets. Transports only translate.
import { availableParallelism } from "node:os";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import { callerKey } from "../handlers/context.js";
import { edgeAdmission } from "../handlers/admission.js";
import type { SubscriptionHub, HubObserver } from "../live/subscriptions.js";
import type { HeadFeed } from "../live/headFeed.js";
import type { Policy } from "../policy/policy.js";
import { callerGate } from "../transport/connect/callerGate.js";
import { errorMappingInterceptor } from "../transport/connect/errorMap.js";
import { arrivedBytesKey, bodySizeInterceptor } from "../transport/connect/bodySize.js";
import { bytesArrived } from "../transport/http/budgetedHandler.js";
import { withMediaTypeHint } from "../transport/connect/mediaType.js";
import { connectRoutes } from "../transport/connect/routes.js";
import { responseCompression } from "../transport/connect/requestCompression.js";
import { clientIp, liveTrustedProxies } from "../transport/http/clientIp.js";
import { withCors } from "../transport/http/cors.js";
import { healthRoutes } from "../transport/http/healthRoutes.js";
import { type DualServer, listenDual } from "../transport/http/listen.js";
import { createRestRouter } from "../transport/http/restRouter.js";
import { jsonRpcRoutes } from "../transport/jsonrpc/jsonRpcRoutes.js";
import { keyHolderRoutes } from "../transport/jsonrpc/keyHolderRoutes.js";
import { KEYS_PATH } from "../transport/portal/portalRoutes.js";
import { webhookRoutes } from "../transport/webhooks/webhookRoutes.js";
import { shardHost } from "../transport/websocket/shardHost.js";
import { webSocketEndpoint } from "../transport/websocket/webSocketEndpoint.js";
import { zktRoutes } from "../transport/zkt/zktRoutes.js";
import type { GuardedHandlers } from "./handlersPart.js";
import type { NetworkContext } from "./networkContext.js";

export interface EdgeParts {
  pool: UpstreamPool;
  policy: Policy;
  handlers: GuardedHandlers;
  hub: SubscriptionHub;
  feed: HeadFeed;
  hubObserver: HubObserver;
  /** Readiness says "draining" once this is true (set at close). */
  draining: () => boolean;
}

/** Opens the network's port; returns its base address. */
export async function openEdge({ gw, net, deps, log, stack }: NetworkContext, p: EdgeParts): Promise<string> {
  const m = deps.metrics;
  const trusted = liveTrustedProxies(gw.trustedProxies);
  const keyOrigins = new Set(gw.portalKeyOrigins);
  // TRUSTED_PROXIES and the key portal's CORS origins, as a reloaded configuration says.
  deps.onReload?.((next) => {
    sockets.setLogLevel(next.logLevel);
    trusted.replace(next.trustedProxies);
    keyOrigins.clear();
    for (const origin of next.portalKeyOrigins) keyOrigins.add(origin);
  });
  const socketLimits = { ...gw.websocket, maxPayloadBytes: gw.bodyLimitBytes };
  const shardCount = gw.websocket.shards ?? Math.max(0, Math.min(8, availableParallelism() - 1));
  // The one admission every transport below counts its callers' requests and refusals through.
  const admission = edgeAdmission(p.policy);
  const sockets = webSocketEndpoint({
    rpc: p.handlers.rpc,
    hub: p.hub,
    admission,
    maxBatchSize: gw.maxBatchSize,
    bodyBytesPerRequest: gw.rateLimit.bodyBytesPerRequest,
    limits: socketLimits,
    shards:
      shardCount > 0
        ? {
            socketsInProcess: gw.websocket.socketsInProcess,
            hosts: (events) =>
              Array.from({ length: shardCount }, () =>
                shardHost(
                  {
                    settings: { limits: socketLimits, logLevel: gw.logLevel, network: net.name },
                    restart: gw.resilience.shardRestart,
                    feed: p.feed,
                    observer: p.hubObserver,
                    log,
                  },
                  events,
                ),
              ),
          }
        : undefined,
    trustedProxies: trusted,
    log,
    observer: {
      sockets: (delta) => m.webSockets.inc({ network: net.name }, delta),
      slowConsumerClosed: (share) => m.slowConsumerCloses.inc({ network: net.name, share }),
    },
  });
  // WebSockets are told goodbye before the port closes under them.
  let server: DualServer | undefined;
  stack.defer(async () => {
    await sockets.close();
    await server?.close();
  });
  const rest = createRestRouter(
    [
      ...healthRoutes(p.pool, deps.storeHealth, p.draining),
      // With METRICS_PORT, metrics are served there once (transport/http/metricsServer.ts), not here.
      ...(gw.metricsPort === undefined
        ? [
            {
              method: "GET" as const,
              pattern: /^\/metrics$/,
              renderError: () => ({ status: 500 }),
              handle: async () => ({ status: 200, body: await m.text(), contentType: "text/plain; version=0.0.4" }),
            },
          ]
        : []),
      ...jsonRpcRoutes({
        maxBatchSize: gw.maxBatchSize,
        bodyBytesPerRequest: gw.rateLimit.bodyBytesPerRequest,
        rpc: p.handlers.rpc,
        admission,
      }),
      ...keyHolderRoutes({ rpc: p.handlers.rpc, admission }),
      ...zktRoutes({
        zkt: p.handlers.zkt,
        log,
        admission,
        checkedOffLoop: (refused) => m.bodiesCheckedOffLoop.inc({ network: net.name, outcome: refused ? "refused" : "parsed" }),
      }),
      ...webhookRoutes({ webhooks: p.handlers.webhooks, admission }),
      ...deps.sharedRoutes,
    ],
    gw.bodyLimitBytes,
    log,
    trusted,
    (route, status) => m.countHttp(net.name, route, status),
    admission.refusedAddress,
  );
  const handler = connectNodeAdapter({
    routes: connectRoutes(p.handlers),
    fallback: rest.nodeHandler,
    readMaxBytes: gw.bodyLimitBytes,
    acceptCompression: responseCompression,
    // What handlers throw, mapped once (the gate maps its own refusals).
    interceptors: [errorMappingInterceptor, bodySizeInterceptor((caller, weight) => admission.calls(caller, weight), gw.rateLimit.bodyBytesPerRequest)],
    // Before the body is read: who called, and one request of theirs admitted.
    requestGate: callerGate(admission.gate, gw.rateLimit.bodyBytesPerRequest),
    contextValues: (req) =>
      createContextValues()
        .set(callerKey, { clientIp: clientIp(req.socket?.remoteAddress, req.headers["x-forwarded-for"], trusted) })
        .set(arrivedBytesKey, () => bytesArrived(req)),
  });
  // POSTs to REST routes (JSON-RPC, ZKT) over HTTP/1.1 take the fast lane; the same router answers them.
  await deps.beforeListen?.();
  server = await listenDual(
    withCors(withMediaTypeHint(handler), new Map([[KEYS_PATH, keyOrigins]])),
    gw.host,
    net.port,
    { ...gw.http, h2Resets: gw.resilience.h2Resets, exempt: trusted, heldElsewhere: () => sockets.onShards },
    { serves: rest.serves, handle: rest.handle, bodyLimitBytes: gw.bodyLimitBytes },
    sockets.upgrade,
    {
      h2Banned: (reason) => m.h2Bans.inc({ network: net.name, reason }),
      refusedAtAccept: (reason) => m.refusedAtAccept.inc({ network: net.name, reason }),
      bodyDroppedUnread: () => m.bodiesDroppedUnread.inc({ network: net.name }),
      h2AnswerRefused: () => m.h2AnswersRefused.inc({ network: net.name }),
      bodyRefused: (remote, headers) => admission.answered(clientIp(remote, headers["x-forwarded-for"], trusted)),
    },
  );
  return `http://${gw.host}:${server.port}`;
}
