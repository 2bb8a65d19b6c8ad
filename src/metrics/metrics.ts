// Prometheus metrics of one gateway (its own registry, so several gateways in one process never collide).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({ name: "gateway_http_requests_total", help: "HTTP requests by network, route and status", labelNames: ["network", "route", "status"], registers: [this.registry] });
  readonly rpcCalls = new Counter({ name: "gateway_rpc_calls_total", help: "JSON-RPC calls by network, method and outcome (ok or the error code)", labelNames: ["network", "method", "outcome"], registers: [this.registry] });
  readonly upstreamLatency = new Histogram({
    name: "gateway_upstream_request_seconds",
    help: "Upstream node round trips",
    labelNames: ["network", "upstream"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  });
  readonly upstreamHealthy = new Gauge({ name: "gateway_upstream_healthy", help: "1 when the upstream answered its last probe or request", labelNames: ["network", "upstream"], registers: [this.registry] });
  readonly rateLimitRejections = new Counter({ name: "gateway_rate_limit_rejections_total", help: "Requests refused by a rate limit", labelNames: ["network", "scope"], registers: [this.registry] });
  readonly sequencerQueueDepth = new Gauge({ name: "gateway_sequencer_queue_depth", help: "Transactions queued or being broadcast", labelNames: ["network"], registers: [this.registry] });
  readonly broadcastRetries = new Counter({ name: "gateway_broadcast_retries_total", help: "Broadcast attempts that failed transiently and were retried", labelNames: ["network"], registers: [this.registry] });
  readonly nonceLag = new Gauge({ name: "gateway_nonce_lag", help: "Nonces assigned by the sequencer but not yet mined, per signer", labelNames: ["network", "signer"], registers: [this.registry] });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "gateway_process_" });
  }

  // Hot-path metrics go through label-bound children, found by one string key: prom-client otherwise sorts
  // and hashes the label object on every call (~3 % of the gateway's CPU on plain proxied calls).
  private readonly httpChildren = new Map<string, Counter.Internal>();
  private readonly rpcChildren = new Map<string, Counter.Internal>();
  private readonly upstreamChildren = new Map<string, Histogram.Internal<string>>();

  /** Counts an HTTP answer. */
  countHttp(network: string, route: string, status: number): void {
    childOf(this.httpChildren, `${network}\0${route}\0${status}`, () => this.httpRequests.labels({ network, route, status: String(status) })).inc();
  }

  /** Counts a JSON-RPC call's outcome ("ok" or its error code). */
  countRpc(network: string, method: string, outcome: string): void {
    childOf(this.rpcChildren, `${network}\0${method}\0${outcome}`, () => this.rpcCalls.labels({ network, method, outcome })).inc();
  }

  observeUpstream(network: string, upstream: string, seconds: number): void {
    childOf(this.upstreamChildren, `${network}\0${upstream}`, () => this.upstreamLatency.labels({ network, upstream })).observe(seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

function childOf<C>(children: Map<string, C>, key: string, create: () => C): C {
  let c = children.get(key);
  if (!c) children.set(key, (c = create()));
  return c;
}
