// Prometheus metrics of one gateway (its own registry, so several gateways in one process never collide).
import { monotonicNow } from "../clock.js";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { type HistogramSeries, LatencyHistogram } from "./latencyHistogram.js";

/**
 * Per-request counts kept as plain integers by their three label values, handed to prom-client when scraped:
 * prom-client hashes the label set on every inc(), even on a label-bound child; here that happens once per
 * label set per scrape.
 */
class Tally<L extends string> {
  // Three levels of plain Maps: lookups by the caller's own (already interned) strings, no key to build.
  private readonly counts = new Map<string, Map<string, Map<string | number, { labels: Record<L, string>; n: number }>>>();

  constructor(private readonly labels: (a: string, b: string, c: string | number) => Record<L, string>) {}

  /** The last label set counted: a stream of one kind of request counts with no lookup. */
  private lastA: string | undefined = undefined;
  private lastB: string | undefined = undefined;
  private lastC: string | number | undefined = undefined;
  private last: { n: number } = { n: 0 };

  add(a: string, b: string, c: string | number): void {
    if (c === this.lastC && b === this.lastB && a === this.lastA) {
      this.last.n++;
      return;
    }
    let byB = this.counts.get(a);
    if (!byB) this.counts.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (!byC) byB.set(b, (byC = new Map()));
    let entry = byC.get(c);
    if (entry) entry.n++;
    else byC.set(c, (entry = { labels: this.labels(a, b, c), n: 1 }));
    this.lastA = a;
    this.lastB = b;
    this.lastC = c;
    this.last = entry;
  }

  /** Moves what was counted since the last scrape into `counter`. */
  drainInto(counter: Counter<L>): void {
    for (const byB of this.counts.values()) {
      for (const byC of byB.values()) {
        for (const entry of byC.values()) {
          if (entry.n === 0) continue;
          counter.inc(entry.labels, entry.n);
          entry.n = 0;
        }
      }
    }
  }
}

/** What the health gauges read when scraped. */
export interface StoresHealth {
  /** The store's kind (embedded, postgres) and whether it takes writes. */
  storeKind: string;
  store: boolean;
  /** The shared rate-limit store (Redis): undefined without one. */
  rateLimitStore: boolean | undefined;
}

export interface SequencerFigures {
  unconfirmed: number;
  lanesLagging: number;
  maxLag: number;
  lanes: number;
  rewinds: number;
  /** Age of the oldest write still unfinished among those the background pass looks at; 0 when none. */
  oldestUnfinishedSeconds: number;
}

/** A network's webhook deliveries not yet made. */
export interface WebhookBacklog {
  pending: number;
  oldestSeconds: number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly httpTally = new Tally<"network" | "route" | "status">((network, route, status) => ({ network, route, status: String(status) }));
  private readonly rpcTally = new Tally<"network" | "method" | "outcome">((network, method, outcome) => ({ network, method, outcome: String(outcome) }));
  readonly httpRequests: Counter<"network" | "route" | "status">;
  readonly rpcCalls: Counter<"network" | "method" | "outcome">;
  readonly upstreamLatency = new LatencyHistogram<"network" | "upstream">(
    "gateway_upstream_request_seconds",
    "Upstream node round trips",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    this.registry,
    ["network", "upstream"],
  );
  readonly requestDuration = new LatencyHistogram<"network" | "transport" | "method">(
    "gateway_request_duration_seconds",
    "Client calls from the gateway's core taking them to their answer, by network, transport (http, websocket, connect, grpc, grpc-web) and method (each call of a batch)",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    this.registry,
    ["network", "transport", "method"],
  );
  readonly upstreamHealthy = new Gauge({
    name: "gateway_upstream_healthy",
    help: "1 when the upstream answered its last probe or request",
    labelNames: ["network", "upstream"],
    registers: [this.registry],
  });
  readonly rateLimitRejections = new Counter({
    name: "gateway_rate_limit_rejections_total",
    help: "Requests refused by a rate limit",
    labelNames: ["network", "scope"],
    registers: [this.registry],
  });
  readonly sequencerQueueDepth = new Gauge({
    name: "gateway_sequencer_queue_depth",
    help: "Transactions queued or being broadcast",
    labelNames: ["network"],
    registers: [this.registry],
  });
  readonly broadcastRetries = new Counter({
    name: "gateway_broadcast_retries_total",
    help: "Broadcast attempts that failed transiently and were retried",
    labelNames: ["network"],
    registers: [this.registry],
  });
  readonly writesReopened = new Counter({
    name: "gateway_writes_reopened_total",
    help: "Writes the journal had as completed that the node no longer held (it went back): made pending and sent again",
    labelNames: ["network"],
    registers: [this.registry],
  });
  // Lag as aggregates per network: a label per signer would be unbounded cardinality.
  readonly stuckLanes = new Gauge({
    name: "gateway_stuck_lanes",
    help: "Signers with writes re-sent in the last pass because the node had not mined them",
    labelNames: ["network"],
    registers: [this.registry],
  });
  readonly upstreamLag = new Gauge({
    name: "gateway_upstream_lag_blocks",
    help: "Blocks an upstream is behind the best one (last probe)",
    labelNames: ["network", "upstream"],
    registers: [this.registry],
  });
  readonly upstreamScore = new Gauge({
    name: "gateway_upstream_score",
    help: "An upstream's routing score (answer time weighted by recent errors; lower is chosen first)",
    labelNames: ["network", "upstream"],
    registers: [this.registry],
  });
  readonly upstreamDroppedWrites = new Counter({
    name: "gateway_upstream_dropped_writes_total",
    help: "Writes an upstream took (answered their hash) that no node held afterwards: dropped sends, each sent again",
    labelNames: ["network", "upstream"],
    registers: [this.registry],
  });
  readonly upstreamWritesPaused = new Gauge({
    name: "gateway_upstream_writes_paused",
    help: "1 while an upstream is sent no writes because it dropped them (another node takes them meanwhile)",
    labelNames: ["network", "upstream"],
    registers: [this.registry],
  });
  readonly upstreamCircuitOpen = new Gauge({
    name: "gateway_upstream_circuit_open",
    help: "1 while an upstream's circuit breaker is open",
    labelNames: ["network", "upstream"],
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: "gateway_webhook_attempts_total",
    help: "Webhook delivery attempts, by outcome (delivered, failed: retried later or given up, gone: 410 disabled the endpoint)",
    labelNames: ["network", "outcome"],
    registers: [this.registry],
  });
  readonly upstreamIntegrity = new Counter({
    name: "gateway_upstream_integrity_total",
    help: "Node answers that failed an integrity check (stale_block, logs_outside_range, missing_behind), by whether another node answered right",
    labelNames: ["network", "check", "outcome"],
    registers: [this.registry],
  });
  readonly upstreamHedges = new Counter({
    name: "gateway_upstream_hedges_total",
    help: "Reads also sent to a second upstream because the first was slow, by whether the hedge answered first",
    labelNames: ["network", "outcome"],
    registers: [this.registry],
  });
  readonly upstreamHeightWaits = new Counter({
    name: "gateway_upstream_height_waits_total",
    help:
      "Reads that named a block no node in service had yet, waited for one to reach it (up to 3 s), by outcome: " +
      "reached, or unreached (answered by the node furthest ahead; that height is not waited for again)",
    labelNames: ["network", "outcome"],
    registers: [this.registry],
  });
  readonly webSockets = new Gauge({
    name: "gateway_websocket_connections",
    help: "Open WebSocket connections",
    labelNames: ["network"],
    registers: [this.registry],
  });
  readonly subscriptions = new Gauge({
    name: "gateway_subscriptions",
    help: "Live subscriptions (WebSocket eth_subscribe and Connect streams) by kind",
    labelNames: ["network", "kind"],
    registers: [this.registry],
  });
  readonly notifications = new Counter({
    name: "gateway_notifications_total",
    help: "Subscription notifications sent, by kind",
    labelNames: ["network", "kind"],
    registers: [this.registry],
  });
  readonly slowConsumerCloses = new Counter({
    name: "gateway_websocket_slow_consumer_closes_total",
    help: "WebSockets closed because they did not read their notifications: past their own bound (share=socket) or their address's (share=address)",
    labelNames: ["network", "share"],
    registers: [this.registry],
  });
  readonly h2Bans = new Counter({
    name: "gateway_http2_bans_total",
    help: "Client IPs that passed an HTTP/2 budget (reason: resets, streams): sessions ended, new connections refused for a back-off",
    labelNames: ["network", "reason"],
    registers: [this.registry],
  });
  readonly h2AnswersRefused = new Counter({
    name: "gateway_http2_answers_refused_total",
    help: "HTTP/2 streams reset ENHANCE_YOUR_CALM because their IP's answers not yet taken (a shut flow-control window) passed HTTP2_ANSWER_BYTES_PER_IP",
    labelNames: ["network"],
    registers: [this.registry],
  });
  readonly bodiesDroppedUnread = new Counter({
    name: "gateway_http_bodies_dropped_unread_total",
    help: "Large HTTP/1.1 request bodies refused before they were read (a caller over its limit): dropped as they arrived, never decoded or parsed",
    labelNames: ["network"],
    registers: [this.registry],
  });
  readonly bodiesCheckedOffLoop = new Counter({
    name: "gateway_zkt_bodies_checked_off_loop_total",
    help: "Large ZKT bodies decoded, parsed and checked on a worker thread rather than the event loop (outcome: parsed, refused)",
    labelNames: ["network", "outcome"],
    registers: [this.registry],
  });
  readonly refusedAtAccept = new Counter({
    name: "gateway_connections_refused_at_accept_total",
    help: "Connections closed at accept, unread (reason: h2_backoff, their IP in an HTTP/2 back-off; connection_cap, past a connection cap, and connection_rate, past its IP's new connections per second, once the IP was told so this second)",
    labelNames: ["network", "reason"],
    registers: [this.registry],
  });
  readonly nodeShareRefusals = new Counter({
    name: "gateway_node_share_refusals_total",
    help: "Requests refused because their caller already had its share of heavy calls (eth_call, eth_getLogs, …) at the node",
    labelNames: ["network"],
    registers: [this.registry],
  });
  private readonly sequencerSources = new Map<string, () => SequencerFigures>();
  private readonly webhookSources = new Map<string, () => Promise<WebhookBacklog>>();

  /** A gauge per network, read from its source when scraped (a source may answer later: the store's backlog). */
  private perNetwork<F>(sources: Map<string, () => F | Promise<F>>, name: string, help: string, pick: (f: F) => number): void {
    new Gauge({
      name,
      help,
      labelNames: ["network"],
      registers: [this.registry],
      async collect() {
        for (const [network, read] of sources) {
          const f = await Promise.resolve()
            .then(read)
            .catch(() => undefined);
          if (f !== undefined) this.set({ network }, pick(f));
        }
      },
    });
  }
  private readonly reloads = new Counter({
    name: "gateway_config_reloads_total",
    help: "Configuration reloads (SIGHUP, AdminService.ReloadConfig) by outcome: applied, invalid (the file did not validate), refused (a setting that needs a restart changed) or partial (applied, but a part could not take its settings)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  private readonly reloadFailures = new Counter({
    name: "gateway_config_reload_failures_total",
    help: "Configuration reloads that failed: nothing changed (the file was invalid, or changed a setting that needs a restart), or a part could not take its settings",
    registers: [this.registry],
  });
  private healthSource: (() => StoresHealth) | undefined;

  constructor() {
    const httpTally = this.httpTally;
    const rpcTally = this.rpcTally;
    this.httpRequests = new Counter({
      name: "gateway_http_requests_total",
      help: "HTTP requests by network, route and status",
      labelNames: ["network", "route", "status"],
      registers: [this.registry],
      collect() {
        httpTally.drainInto(this);
      },
    });
    this.rpcCalls = new Counter({
      name: "gateway_rpc_calls_total",
      help: "JSON-RPC calls by network, method and outcome (ok or the error code)",
      labelNames: ["network", "method", "outcome"],
      registers: [this.registry],
      collect() {
        rpcTally.drainInto(this);
      },
    });
    const health = () => this.healthSource?.();
    new Gauge({
      name: "gateway_store_up",
      help: "1 while the store (journal, keys; SQLite or PostgreSQL) takes writes, 0 while it is unavailable (writes answer 503, /readyz is false)",
      labelNames: ["store"],
      registers: [this.registry],
      collect() {
        const h = health();
        if (h) this.set({ store: h.storeKind }, h.store ? 1 : 0);
      },
    });
    new Gauge({
      name: "gateway_rate_limit_store_up",
      help: "1 while the shared rate-limit store (Redis) takes decisions, 0 while its breaker is open (decisions by the fail policy); absent without REDIS_URL",
      labelNames: ["store"],
      registers: [this.registry],
      collect() {
        const up = health()?.rateLimitStore;
        if (up !== undefined) this.set({ store: "redis" }, up ? 1 : 0);
      },
    });
    const figure = (name: string, help: string, pick: (f: SequencerFigures) => number): void => this.perNetwork(this.sequencerSources, name, help, pick);
    figure("gateway_unconfirmed_writes", "Writes broadcast and not yet at the confirmation depth", (f) => f.unconfirmed);
    figure("gateway_lanes_lagging", "Signers with at least one unconfirmed write", (f) => f.lanesLagging);
    figure("gateway_nonce_lag_max", "The most unconfirmed writes of any one signer", (f) => f.maxLag);
    figure("gateway_nonce_lanes", "Nonce lanes held in memory", (f) => f.lanes);
    figure(
      "gateway_oldest_unfinished_write_seconds",
      "Age of the oldest write still unfinished that the background pass looks at (pending past its first try, processing past stuckTransactionMs); 0 when none",
      (f) => f.oldestUnfinishedSeconds,
    );
    this.perNetwork(this.webhookSources, "gateway_webhook_backlog", "Webhook deliveries of active endpoints not yet delivered nor given up", (b) => b.pending);
    this.perNetwork(
      this.webhookSources,
      "gateway_webhook_oldest_pending_seconds",
      "Age of the oldest webhook delivery not yet delivered nor given up; 0 when none",
      (b) => b.oldestSeconds,
    );
    const sequencers = this.sequencerSources;
    new Counter({
      name: "gateway_chain_rewinds_total",
      help: "Times the node went back below blocks the sequencer had walked",
      labelNames: ["network"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [network, read] of sequencers) this.inc({ network }, read().rewinds);
      },
    });
    // The event-loop-lag sampler at 100 ms, not prom-client's 10 ms, which wakes an idle gateway 100 times a
    // second. Lag is still measured in full; it is sampled less often.
    // prom-client's names already begin process_/nodejs_: "gateway_" only, not "gateway_process_process_".
    collectDefaultMetrics({ register: this.registry, prefix: "gateway_", eventLoopMonitoringPrecision: 100 });
    // Gauges named like counters (promtool refuses them); the same figures stay, by type, in the series
    // without the suffix (gateway_nodejs_active_handles{type}, …).
    for (const kind of ["handles", "requests", "resources"]) this.registry.removeSingleMetric(`gateway_nodejs_active_${kind}_total`);
  }

  /** Upstream latency series by network, then upstream: the caller's own strings, no key to build. */
  private readonly upstreamSeries = new Map<string, Map<string, HistogramSeries>>();

  /** Counts an HTTP answer. */
  countHttp(network: string, route: string, status: number): void {
    this.httpTally.add(network, route, status);
  }

  /** Counts a JSON-RPC call's outcome ("ok" or its error code). */
  countRpc(network: string, method: string, outcome: string): void {
    this.rpcTally.add(network, method, outcome);
  }

  observeUpstream(network: string, upstream: string, seconds: number): void {
    const last = this.lastUpstream;
    if (last !== undefined && upstream === last.upstream && network === last.network) return last.series.observe(seconds);
    let byUpstream = this.upstreamSeries.get(network);
    if (!byUpstream) this.upstreamSeries.set(network, (byUpstream = new Map()));
    let series = byUpstream.get(upstream);
    if (!series) byUpstream.set(upstream, (series = this.upstreamLatency.series({ network, upstream })));
    this.lastUpstream = { network, upstream, series };
    series.observe(seconds);
  }
  /** The series observed last: a stream of round trips to one node observes with no lookup. */
  private lastUpstream: { network: string; upstream: string; series: HistogramSeries } | undefined;

  /**
   * Records one network's client call durations (`method` bounded by the caller: unknown methods share one
   * label); its series found by transport, then method, in the caller's own strings.
   */
  requestDurations(network: string): (transport: string, method: string, seconds: number) => void {
    const byTransport = new Map<string, Map<string, HistogramSeries>>();
    let lastTransport: string | undefined;
    let lastMethod: string | undefined;
    let last: HistogramSeries | undefined;
    return (transport, method, seconds) => {
      if (method === lastMethod && transport === lastTransport) return last!.observe(seconds);
      let byMethod = byTransport.get(transport);
      if (!byMethod) byTransport.set(transport, (byMethod = new Map()));
      let series = byMethod.get(method);
      if (!series) byMethod.set(method, (series = this.requestDuration.series({ network, transport, method })));
      lastTransport = transport;
      lastMethod = method;
      last = series;
      series.observe(seconds);
    };
  }

  /** A configuration reload's outcome. */
  countReload(outcome: "applied" | "invalid" | "refused" | "partial"): void {
    this.reloads.inc({ outcome });
    if (outcome !== "applied") this.reloadFailures.inc();
  }

  /** The stores' health, read when scraped. */
  followHealth(read: () => StoresHealth): void {
    this.healthSource = read;
  }

  /** A network's sequencer figures, read when scraped. */
  followSequencer(network: string, read: () => SequencerFigures): void {
    this.sequencerSources.set(network, read);
  }

  /** A network's webhook backlog, read (from the store) when scraped. */
  followWebhooks(network: string, read: () => Promise<WebhookBacklog>): void {
    // Both backlog gauges read it in one scrape: one store query, not two.
    let last: { at: number; backlog: Promise<WebhookBacklog> } | undefined;
    this.webhookSources.set(network, () => {
      const now = monotonicNow();
      if (!last || now - last.at > 1_000) last = { at: now, backlog: read() };
      return last.backlog;
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
