// A network's live side: one follower of the chain (the head feed) behind every subscription, webhook log
// events and the gateway's own filters, all on that feed, so they work whichever node answers.
import type { UpstreamPool } from "../chain/upstreamPool.js";
import { GatewayFilters } from "../live/gatewayFilters.js";
import { HeadFeed } from "../live/headFeed.js";
import { type HubObserver, SubscriptionHub } from "../live/subscriptions.js";
import { upstreamHeads } from "../live/upstreamHeads.js";
import type { JsonValue } from "../errors.js";
import { registerGetLogs } from "../rpc/methods/ethGetLogs.js";
import { registerFilterMethods } from "../rpc/methods/filters.js";
import type { RpcCore } from "../rpc/rpcCore.js";
import { LogEvents } from "../webhooks/logEvents.js";
import { WebhookRegistry } from "../webhooks/webhookRegistry.js";
import type { NetworkContext } from "./networkContext.js";

export interface LivePart {
  feed: HeadFeed;
  hub: SubscriptionHub;
  hubObserver: HubObserver;
  registry: WebhookRegistry;
}

export function startLive(
  { gw, net, deps, log, stack }: NetworkContext,
  pool: UpstreamPool,
  core: RpcCore,
  headsWs: string | undefined,
  wakeWebhooks: () => void,
): LivePart {
  const m = deps.metrics;
  // It polls only while someone subscribes, and reads at once when the node's own WebSocket announces a head.
  const feed = new HeadFeed(pool, {
    pollMs: gw.websocket.headPollMs ?? Math.max(50, Math.min(1_000, Math.round(net.blockTimeSeconds * 500))),
    onError: (err) => log.debug("head feed poll failed; retried next poll", { error: err.message }),
    ...(headsWs
      ? {
          wakeups: upstreamHeads(
            headsWs,
            (err) => log.debug("the node's heads WebSocket failed; polling meanwhile", { error: err.message }),
            gw.resilience.nodeHeadsReconnect,
          ),
        }
      : {}),
  });
  stack.defer(() => feed.stop());
  const hubObserver: HubObserver = {
    subscriptions: (kind, delta) => m.subscriptions.inc({ network: net.name, kind }, delta),
    notified: (kind, n) => n > 0 && m.notifications.inc({ network: net.name, kind }, n),
  };
  const hub = new SubscriptionHub(feed, hubObserver);
  const logEvents = new LogEvents({ network: net.name, hub, store: deps.webhookStore, log, written: wakeWebhooks, refreshMs: deps.sharedStore ? 5_000 : 0 });
  stack.defer(() => logEvents.stop());
  void logEvents.refresh();
  const registry = new WebhookRegistry(deps.webhookStore, gw.webhooks, () => {
    wakeWebhooks();
    void logEvents.refresh();
  });
  // eth_getLogs bounded before a node is asked (rpc/boundedLogs.ts); the filters' logs the same way.
  const logsNode = { call: (method: string, params: JsonValue[]) => pool.call(method, params), head: () => pool.head };
  const logBounds = { maxBlockRange: gw.logsMaxBlockRange, maxResults: gw.logsMaxResults };
  // Read at each call: a reloaded configuration's caps apply to the next one.
  deps.onReload?.((next) => Object.assign(logBounds, { maxBlockRange: next.logsMaxBlockRange, maxResults: next.logsMaxResults }));
  const getLogs = registerGetLogs(core, logsNode, logBounds);
  const filters = new GatewayFilters(hub, (filter, signal) => getLogs({ access: { kind: "public" }, ...(signal ? { signal } : {}) }, [filter]), {
    idleMs: gw.filterIdleMs,
    perCaller: gw.filtersPerCaller,
    maxBacklog: 10_000,
  });
  stack.defer(() => filters.close());
  registerFilterMethods(core, filters, logsNode, logBounds);
  return { feed, hub, hubObserver, registry };
}
