// A network's webhooks: the journal writes an event's outbox rows with its status change and says so;
// this network's dispatcher sends them. Write callbacks are the per-write kind.
import type { UpstreamPool } from "../chain/upstreamPool.js";
import { WebhookDispatcher } from "../webhooks/webhookDispatcher.js";
import { describeDelivery } from "../webhooks/webhookEvents.js";
import { WriteCallbacks } from "../webhooks/writeCallbacks.js";
import type { NetworkContext } from "./networkContext.js";

export interface WebhooksPart {
  /** Wakes the dispatcher: something was written to the outbox. */
  wake: () => void;
  callbacks: WriteCallbacks;
}

export function startWebhooks({ gw, net, deps, log, stack }: NetworkContext, pool: UpstreamPool): WebhooksPart {
  const dispatcher = new WebhookDispatcher({
    network: net.name,
    store: deps.webhookStore,
    describe: (d) =>
      describeDelivery(d, {
        journal: deps.store,
        abiOf: (queueId) => deps.webhookStore.abiOf(queueId),
        call: (method, params) => pool.call(method, params),
      }),
    allowPrivate: gw.webhooks.allowPrivate,
    // Alone on its store, this process's own writes wake the dispatcher; a slow look besides, should a claim
    // have failed (a full disk) with nothing written since to wake it.
    pollMs: deps.sharedStore ? 500 : 30_000,
    maxRetryMs: gw.webhooks.maxRetryMs,
    giveUpMs: gw.webhooks.giveUpMs,
    eventsPerSecond: gw.webhooks.eventsPerSecond,
    log,
    observer: { attempt: (outcome) => deps.metrics.webhookAttempts.inc({ network: net.name, outcome }) },
  });
  const wake = () => dispatcher.wake();
  // gw.webhooks itself is updated by the gateway's reload (the registry and the callbacks read it at each use).
  deps.onReload?.((next) => dispatcher.reconfigure(next.webhooks));
  deps.metrics.followWebhooks(net.name, () => deps.webhookStore.backlog(net.name));
  deps.store.outboxListeners?.add(wake);
  stack.defer(async () => {
    deps.store.outboxListeners?.delete(wake);
    await dispatcher.stop();
  });
  dispatcher.wake();
  const callbacks = new WriteCallbacks({
    network: net.name,
    store: deps.webhookStore,
    journal: deps.store,
    get allowPrivate() {
      return gw.webhooks.allowPrivate;
    },
    walletOf: (access) => deps.wallets.signer(access.walletIndex).address,
    seedSecret: deps.wallets.callbackRoot,
    secretOverlapMs: gw.webhooks.secretOverlapMs,
    written: wake,
  });
  return { wake, callbacks };
}
