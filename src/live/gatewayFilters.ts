// Filters the gateway owns: eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter and their polls,
// fed by the network's one HeadFeed through the subscription hub instead of living on one node. A filter so
// works whichever node answers, across a failover and a node's restart; a reorg's dropped logs come again with
// removed: true (as geth's do). As geth, a filter reports what arrives after it was made, and one unpolled for
// the idle time (5 minutes) is dropped. Each caller holds a bounded number, and each filter a bounded backlog:
// past it the filter is dropped, and its next poll says why. Filters are this process's (see OPERATIONS.md).
import { GatewayError, type JsonValue } from "../errors.js";
import type { LogFilter } from "./logFilter.js";
import { parseLogFilter } from "./parseLogFilter.js";
import { newSubscriptionId, type SharedResult, type SubscriptionHub, type SubscriptionKind } from "./subscriptions.js";
import { monotonicNow } from "../clock.js";

export interface FilterLimits {
  /** A filter not polled for this long is dropped (geth: 5 minutes). */
  idleMs: number;
  /** Filters one caller (a key, or an IP without one) may hold at once. */
  perCaller: number;
  /** Changes a filter keeps between two polls; past it the filter is dropped. */
  maxBacklog: number;
}

export const DEFAULT_FILTER_LIMITS: FilterLimits = { idleMs: 300_000, perCaller: 100, maxBacklog: 10_000 };

type FilterKind = "logs" | "blocks" | "pending";

interface Filter {
  kind: FilterKind;
  owner: string;
  polledAt: number;
  /** The subscription's results since the last poll, as the hub shares them (JSON text). */
  backlog: SharedResult[];
  /** The filter as created, for eth_getFilterLogs (log filters). */
  created?: { [key: string]: JsonValue };
  /** Numeric fromBlock / toBlock of a log filter: changes outside them are not reported. */
  from?: number;
  to?: number;
}

const HUB_KIND: Record<FilterKind, SubscriptionKind> = { logs: "logs", blocks: "newHeads", pending: "newPendingTransactions" };
const notFound = (): GatewayError => new GatewayError("not_found", "filter not found", { jsonRpcCode: -32000 });

export class GatewayFilters {
  private readonly filters = new Map<string, Filter>();
  /** Why a filter went, for its next poll (told once, kept at most one idle period). */
  private readonly gone = new Map<string, { why: string; at: number }>();
  private readonly perOwner = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly hub: SubscriptionHub,
    /** eth_getLogs as callers get it (bounded, across nodes): eth_getFilterLogs runs the filter through it. */
    private readonly getLogs: (filter: { [key: string]: JsonValue }, signal?: AbortSignal) => Promise<JsonValue>,
    private readonly limits: FilterLimits = DEFAULT_FILTER_LIMITS,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(1_000, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.filters.size;
  }

  /** eth_newFilter: a log filter (address, topics; numeric fromBlock/toBlock bound what it reports). */
  newLogFilter(owner: string, raw: JsonValue | undefined): string {
    const created = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? raw : undefined;
    if (created === undefined || created.blockHash !== undefined)
      throw new GatewayError("invalid_params", "Invalid params: eth_newFilter takes one filter object {fromBlock?, toBlock?, address?, topics?}");
    const filter: Filter = { kind: "logs", owner, polledAt: monotonicNow(), backlog: [], created };
    const from = blockNumber(created.fromBlock);
    const to = blockNumber(created.toBlock);
    if (from !== undefined) filter.from = from;
    if (to !== undefined) filter.to = to;
    return this.add(filter, parseLogFilter(created));
  }

  newBlockFilter(owner: string): string {
    return this.add({ kind: "blocks", owner, polledAt: monotonicNow(), backlog: [] }, {});
  }

  newPendingTransactionFilter(owner: string): string {
    return this.add({ kind: "pending", owner, polledAt: monotonicNow(), backlog: [] }, {});
  }

  /** eth_getFilterChanges: what arrived since the last poll (block hashes, logs, or transaction hashes). */
  changes(id: string): JsonValue[] {
    const filter = this.filters.get(normalId(id));
    if (!filter) throw this.goneError(normalId(id));
    filter.polledAt = monotonicNow();
    const backlog = filter.backlog;
    filter.backlog = [];
    const out: JsonValue[] = [];
    for (const r of backlog) {
      const value = JSON.parse(r.text) as JsonValue;
      if (filter.kind === "blocks") out.push((value as { hash?: JsonValue }).hash ?? null);
      else if (filter.kind === "pending" || inRange(filter, value)) out.push(value);
    }
    return out;
  }

  /** eth_getFilterLogs: the log filter's whole range, asked of the nodes as eth_getLogs (and bounded as it). */
  async logs(id: string, signal?: AbortSignal): Promise<JsonValue> {
    const filter = this.filters.get(normalId(id));
    if (!filter) throw this.goneError(normalId(id));
    if (filter.kind !== "logs" || !filter.created)
      throw new GatewayError("invalid_params", "Invalid params: eth_getFilterLogs needs a log filter (eth_newFilter)");
    filter.polledAt = monotonicNow();
    return this.getLogs(filter.created, signal);
  }

  uninstall(id: string): boolean {
    const key = normalId(id);
    this.gone.delete(key);
    return this.drop(key);
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const id of [...this.filters.keys()]) this.drop(id);
  }

  private add(filter: Filter, match: LogFilter): string {
    const held = this.perOwner.get(filter.owner) ?? 0;
    if (held >= this.limits.perCaller)
      throw new GatewayError(
        "limit_exceeded",
        `limit exceeded: at most ${this.limits.perCaller} filters at once per caller; uninstall some (eth_uninstallFilter) or let them expire`,
        { details: { limit: this.limits.perCaller, requested: held + 1 } },
      );
    const id = newSubscriptionId();
    this.hub.subscribe(HUB_KIND[filter.kind], match, (r) => this.collect(id, r), id);
    this.hub.release(id);
    this.filters.set(id, filter);
    this.perOwner.set(filter.owner, held + 1);
    return id;
  }

  private collect(id: string, r: SharedResult): void {
    const filter = this.filters.get(id);
    if (!filter) return;
    if (filter.backlog.length >= this.limits.maxBacklog) {
      this.drop(id, `filter dropped: more than ${this.limits.maxBacklog} changes were not polled; poll more often, or narrow the filter, and create it again`);
      return;
    }
    filter.backlog.push(r);
  }

  private drop(id: string, why?: string): boolean {
    const filter = this.filters.get(id);
    if (!filter) return false;
    this.filters.delete(id);
    this.hub.unsubscribe(id);
    const held = (this.perOwner.get(filter.owner) ?? 1) - 1;
    if (held <= 0) this.perOwner.delete(filter.owner);
    else this.perOwner.set(filter.owner, held);
    if (why) this.gone.set(id, { why, at: monotonicNow() });
    return true;
  }

  private sweep(): void {
    const before = monotonicNow() - this.limits.idleMs;
    for (const [id, g] of this.gone) if (g.at < before) this.gone.delete(id);
    for (const [id, f] of this.filters) if (f.polledAt < before) this.drop(id);
  }

  private goneError(id: string): GatewayError {
    const gone = this.gone.get(id);
    if (gone === undefined) return notFound();
    this.gone.delete(id);
    return new GatewayError("not_found", gone.why, { jsonRpcCode: -32000 });
  }
}

/** Filter ids compare as geth's do: hex, case-insensitively. */
function normalId(id: string): string {
  return id.toLowerCase();
}

function blockNumber(v: JsonValue | undefined): number | undefined {
  return typeof v === "string" && /^0x[0-9a-fA-F]+$/.test(v) ? Number.parseInt(v, 16) : undefined;
}

function inRange(filter: Filter, log: JsonValue): boolean {
  if (filter.from === undefined && filter.to === undefined) return true;
  const n = blockNumber((log as { blockNumber?: JsonValue }).blockNumber);
  if (n === undefined) return true;
  return (filter.from === undefined || n >= filter.from) && (filter.to === undefined || n <= filter.to);
}
