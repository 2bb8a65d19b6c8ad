// "log" webhook events: each endpoint with a log filter is a logs subscription on the network's one head
// feed (the same shapes as eth_subscribe's, a reorg's dropped logs again with removed: true), and each matching
// log is written to its outbox. Every replica follows every such endpoint (the list is read again every few
// seconds, so an endpoint another replica registered is followed here too); a log's outbox row is named by
// its block hash, index and removal, so replicas that all saw it write it once.
import type { Logger } from "../log/logger.js";
import type { LogFilter } from "../live/logFilter.js";
import type { SubscriptionHub } from "../live/subscriptions.js";
import type { WebhookRow, WebhookStore } from "../store/webhookStore.js";

export class LogEvents {
  /** Followed endpoints: id → the hub subscription and the filter it was made with. */
  private readonly followed = new Map<string, { sub: string; filter: string }>();
  /** Writes to the outbox one at a time, in the feed's order (an endpoint's events keep their order). */
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      network: string;
      hub: SubscriptionHub;
      store: WebhookStore;
      log: Logger;
      /** Rows were written: the dispatcher looks. */
      written: () => void;
      /** How often the list is read again (other replicas' endpoints); 0: never (the embedded store: one process). */
      refreshMs: number;
    },
  ) {
    if (options.refreshMs > 0) {
      this.timer = setInterval(() => void this.refresh(), options.refreshMs);
      this.timer.unref();
    }
  }

  /** Follows the network's endpoints with a log filter as the store lists them now. */
  async refresh(): Promise<void> {
    const { store, network, hub } = this.options;
    let endpoints: WebhookRow[];
    try {
      endpoints = await store.withLogFilters(network);
    } catch (err) {
      this.options.log.warn("log webhooks could not be listed; retried", { error: (err as Error).message });
      return;
    }
    const wanted = new Map(endpoints.map((e) => [e.id, e.logFilter!]));
    for (const [id, f] of this.followed) {
      if (wanted.get(id) === f.filter) continue;
      hub.unsubscribe(f.sub);
      this.followed.delete(id);
    }
    for (const [id, filter] of wanted) {
      if (this.followed.has(id)) continue;
      const sub = hub.subscribe("logs", JSON.parse(filter) as LogFilter, (r) => this.write(id, r.text));
      hub.release(sub);
      this.followed.set(id, { sub, filter });
    }
  }

  stop(): void {
    clearInterval(this.timer);
    for (const f of this.followed.values()) this.options.hub.unsubscribe(f.sub);
    this.followed.clear();
  }

  private write(webhookId: string, text: string): void {
    const log = JSON.parse(text) as { blockHash?: string; logIndex?: string; removed?: boolean };
    const dedupe = `${log.blockHash}:${log.logIndex}:${log.removed === true ? "removed" : "added"}`;
    this.writing = this.writing
      .then(async () => {
        if (await this.options.store.enqueue(webhookId, "log", text, dedupe)) this.options.written();
      })
      .catch((err: unknown) => this.options.log.warn("a log event could not be written to the outbox", { webhook: webhookId, error: (err as Error).message }));
  }
}
