// eth_subscribe as geth serves it, for any transport that can push: newHeads, logs (address and topics
// filter) and newPendingTransactions, fed by the network's one HeadFeed. A block's or log's JSON is serialised
// once, whatever the number of subscribers, and that one result goes to each of them; a transport puts it in
// its own envelope (notification.ts for JSON-RPC's).
import { randomBytes } from "node:crypto";
import type { FeedBlock, FeedListener } from "./headFeed.js";
import { type LogFilter, matches } from "./logFilter.js";

export type SubscriptionKind = "newHeads" | "logs" | "newPendingTransactions";

/**
 * A notification's result: its JSON text and that text's UTF-8 length in bytes, made once per block and shared
 * by every subscriber it goes to (at 10,000 subscribers, a copy or a count per subscriber was a scan of each).
 */
export interface SharedResult {
  readonly text: string;
  readonly bytes: number;
}

/** Where a subscription's results go, each the same object for all its subscribers. */
export type NotificationSink = (result: SharedResult) => void;

interface Subscription {
  id: string;
  kind: SubscriptionKind;
  filter: LogFilter;
  sink: NotificationSink;
  /** Results before the subscribe answer went out wait here (the answer must come first). */
  held: SharedResult[] | undefined;
}

/** A subscription id as geth makes them: 16 random bytes, hex. */
export const newSubscriptionId = (): string => `0x${randomBytes(16).toString("hex")}`;

const result = (text: string): SharedResult => ({ text, bytes: Buffer.byteLength(text) });

/** Where a hub's blocks come from: the network's HeadFeed, or in a fan-out shard the parent's relay of it. */
export interface FeedSource {
  add(listener: FeedListener): void;
  remove(listener: FeedListener): void;
}

export interface HubObserver {
  subscriptions(kind: SubscriptionKind, delta: number): void;
  notified(kind: SubscriptionKind, n: number): void;
}

/** A network's live subscriptions, across every socket and stream, on its one feed. */
export class SubscriptionHub {
  private readonly subs = new Map<string, Subscription>();
  private readonly byKind: Record<SubscriptionKind, Set<Subscription>> = { newHeads: new Set(), logs: new Set(), newPendingTransactions: new Set() };
  private readonly listener: FeedListener;
  private listening = false;

  constructor(
    private readonly feed: FeedSource,
    private readonly observer?: HubObserver,
  ) {
    const hub = this;
    this.listener = {
      get wantsLogs() {
        return hub.byKind.logs.size > 0;
      },
      get wantsPending() {
        return hub.byKind.newPendingTransactions.size > 0;
      },
      block: (b) => this.onBlock(b, false),
      removed: (b) => this.onBlock(b, true),
      pending: (hashes) => this.onPending(hashes),
    };
  }

  /**
   * A new subscription; its notifications are held until `release(id)` (call it once the subscribe answer is
   * sent). Returns its id (`id` when given: a WebSocket's are chosen where its policy runs).
   */
  subscribe(kind: SubscriptionKind, filter: LogFilter, sink: NotificationSink, id = newSubscriptionId()): string {
    const sub: Subscription = { id, kind, filter, sink, held: [] };
    this.subs.set(id, sub);
    this.byKind[kind].add(sub);
    this.observer?.subscriptions(kind, 1);
    if (!this.listening) {
      this.listening = true;
      this.feed.add(this.listener);
    }
    return id;
  }

  /** Sends what was held for a new subscription, and everything from now on directly. */
  release(id: string): void {
    const sub = this.subs.get(id);
    if (!sub?.held) return;
    const held = sub.held;
    sub.held = undefined;
    for (const r of held) sub.sink(r);
  }

  unsubscribe(id: string): boolean {
    const sub = this.subs.get(id);
    if (!sub) return false;
    this.subs.delete(id);
    this.byKind[sub.kind].delete(sub);
    this.observer?.subscriptions(sub.kind, -1);
    if (this.subs.size === 0 && this.listening) {
      this.listening = false;
      this.feed.remove(this.listener);
    }
    return true;
  }

  get size(): number {
    return this.subs.size;
  }

  private send(sub: Subscription, r: SharedResult): void {
    if (sub.held) sub.held.push(r);
    else sub.sink(r);
  }

  private onBlock(block: FeedBlock, removed: boolean): void {
    if (!removed) {
      const header = result(block.headerJson);
      for (const sub of this.byKind.newHeads) this.send(sub, header);
      this.observer?.notified("newHeads", this.byKind.newHeads.size);
    }
    if (this.byKind.logs.size === 0 || !block.logs) return;
    let n = 0;
    for (const log of block.logs) {
      let r: SharedResult | undefined;
      for (const sub of this.byKind.logs) {
        if (!matches(sub.filter, log)) continue;
        r ??= result(JSON.stringify(removed ? { ...log.json, removed: true } : log.json));
        this.send(sub, r);
        n++;
      }
    }
    if (n > 0) this.observer?.notified("logs", n);
  }

  private onPending(hashes: string[]): void {
    for (const hash of hashes) {
      const r = result(JSON.stringify(hash));
      for (const sub of this.byKind.newPendingTransactions) this.send(sub, r);
    }
    this.observer?.notified("newPendingTransactions", hashes.length * this.byKind.newPendingTransactions.size);
  }
}
