// Which node gets a request, from what the pool has seen of each: its head (lagging nodes are passed over for
// reads), its score (recent errors, latency), its circuit (open after failures in a row, for a cooldown),
// and when a read to it is worth hedging. Bookkeeping only: the pool sends, logs and reports.
import { UpstreamHttp } from "./upstreamHttp.js";
import { monotonicNow } from "../clock.js";
import { DoublingDelay } from "../resilience/doublingDelay.js";

/** How reads and writes are routed (config `routing`, per network). */
export interface RoutingOptions {
  /** A node this many blocks behind the best is not used for reads while another is closer. */
  maxLagBlocks: number;
  /** Hedge a read after the first node's recent p90 answer time (at least hedgeMinMs); false: never. */
  hedge: boolean;
  hedgeMinMs: number;
  /** Failures in a row that open a node's circuit, and how long it stays open before a trial request. */
  breakerFailures: number;
  breakerCooldownMs: number;
  /** Connections (concurrent requests) per node. */
  connections: number;
}

export const DEFAULT_ROUTING: RoutingOptions = { maxLagBlocks: 2, hedge: true, hedgeMinMs: 20, breakerFailures: 3, breakerCooldownMs: 2_000, connections: 128 };

/** Answer times kept per node for its hedge delay. */
const RECENT = 64;

export interface Upstream {
  url: string;
  /** The URL without path or credentials, for logs and metric labels (computed once). */
  label: string;
  /** Keep-alive connections to the node: no per-request connection or fetch overhead. */
  http: UpstreamHttp;
  healthy: boolean;
  /** Reports another chain (chain id or genesis): never sent anything until a probe finds it right again. */
  wrongChain: boolean;
  /** Its last probe got no answer in time, nor did anything else (frozen): sent nothing until a probe answers. */
  stalled: boolean;
  /** When it last answered anything (performance.now()). */
  answeredAt: number;
  /** Taken out of service by an operator (AdminService.CordonUpstream): never sent anything; probes go on. */
  cordoned: boolean;
  lastError: string | undefined;
  /** Its head as last seen (probe or eth_blockNumber answer); -1 before the first. */
  head: number;
  /** Says it is syncing (eth_syncing not false): used for reads, like a lagging node, only when no other will do. */
  syncing: boolean;
  /** Failures in a row; at `breakerFailures` the circuit opens until `openUntil`. */
  failures: number;
  openUntil: number;
  /** Moving averages: answer time (ms) and the share of failed requests. */
  latencyMs: number;
  errorRate: number;
  /** Recent answer times (ms), for the hedge delay (their p90): a ring, next written at recentAt. */
  recent: number[];
  recentAt: number;
  /** Its routing weight (config networks.*.weights): its score is divided by it; 1 unless configured. */
  weight: number;
  /** When it last took a write that no node held later (a node that drops sends), within the last minute. */
  drops: number[];
  /** Sent no writes before this while another node takes them (it dropped writes); the pause doubles. */
  writesPausedUntil: number;
  writePause: DoublingDelay;
}

export function newUpstream(url: string, routing: RoutingOptions, timeoutMs: number, maxAnswerBytes?: number): Upstream {
  return {
    url,
    label: redactUrl(url),
    http: new UpstreamHttp(new URL(url), { connections: routing.connections, timeoutMs, ...(maxAnswerBytes ? { maxAnswerBytes } : {}) }),
    healthy: true,
    wrongChain: false,
    stalled: false,
    answeredAt: 0,
    cordoned: false,
    lastError: undefined,
    head: -1,
    syncing: false,
    failures: 0,
    openUntil: 0,
    latencyMs: 0,
    errorRate: 0,
    recent: [],
    recentAt: 0,
    weight: 1,
    drops: [],
    writesPausedUntil: 0,
    writePause: new DoublingDelay(WRITE_PAUSE),
  };
}

/** Writes a node took and no node held afterwards, within a minute, that pause its writes; and the pause. */
export const DROPS_TO_PAUSE = 3;
const DROP_WINDOW_MS = 60_000;
const WRITE_PAUSE = { firstMs: 30_000, maxMs: 10 * 60_000 };

/**
 * A write `u` took is held by no node (not pending, not mined) well after: `u` dropped it. True when that
 * pauses its writes (DROPS_TO_PAUSE within a minute); a node that dropped none for the longest pause starts over.
 */
export function recordDroppedWrite(u: Upstream): boolean {
  const now = monotonicNow();
  u.drops = u.drops.filter((t) => now - t < DROP_WINDOW_MS);
  u.drops.push(now);
  if (u.drops.length < DROPS_TO_PAUSE || u.writesPausedUntil > now) return false;
  if (now - u.writesPausedUntil > WRITE_PAUSE.maxMs) u.writePause.reset();
  u.writesPausedUntil = now + u.writePause.next();
  u.drops = [];
  return true;
}

/**
 * Nodes in the order to try: healthy ones that are not behind (by score), then lagging healthy ones, then
 * unhealthy ones (a last resort, circuit open or not). A node of another chain, cordoned, or that let its
 * last probe go unanswered (stalled), is never tried.
 */
export function routeOrder(upstreams: Upstream[], routing: RoutingOptions): Upstream[] {
  // One node (the embedded default): nothing to choose, and nothing allocated per request.
  if (upstreams.length === 1) return out(upstreams[0]!) ? [] : upstreams;
  const now = monotonicNow();
  const best = Math.max(...upstreams.map((u) => u.head));
  const lagging = (u: Upstream): boolean => u.syncing || (u.head >= 0 && best - u.head > routing.maxLagBlocks);
  const closed = (u: Upstream): boolean => u.openUntil <= now;
  const byScore = (a: Upstream, b: Upstream): number => score(a) / a.weight - score(b) / b.weight;
  const candidates = upstreams.filter((u) => !out(u));
  const fresh = candidates.filter((u) => u.healthy && closed(u) && !lagging(u)).sort(byScore);
  const behind = candidates.filter((u) => u.healthy && closed(u) && lagging(u)).sort((a, b) => b.head - a.head);
  const rest = candidates.filter((u) => !fresh.includes(u) && !behind.includes(u)).sort(byScore);
  return [...fresh, ...behind, ...rest];
}

function out(u: Upstream): boolean {
  return u.wrongChain || u.cordoned || u.stalled;
}

/** Lower is better: answer time, tripled by a node that fails half its requests. */
export function score(u: Upstream): number {
  return (u.latencyMs + 1) * (1 + 4 * u.errorRate);
}

/** When to also ask the next node: the node's recent p90 answer time, at least hedgeMinMs. */
export function hedgeDelay(u: Upstream, routing: RoutingOptions): number {
  if (u.recent.length < 8) return Math.max(routing.hedgeMinMs, 4 * u.latencyMs);
  const sorted = [...u.recent].sort((a, b) => a - b);
  return Math.max(routing.hedgeMinMs, sorted[Math.floor(sorted.length * 0.9)]!);
}

/** A request failed: true when this failure opened the node's circuit. */
export function recordFailure(u: Upstream, routing: RoutingOptions): boolean {
  u.failures++;
  u.errorRate = u.errorRate * 0.9 + 0.1;
  if (u.failures < routing.breakerFailures || u.openUntil > monotonicNow()) return false;
  u.openUntil = monotonicNow() + routing.breakerCooldownMs;
  return true;
}

/** A request answered in `ms`; `keepRecent`: the pool can hedge (it has another node), so keep the distribution. */
export function recordSuccess(u: Upstream, ms: number, keepRecent: boolean): void {
  u.failures = 0;
  u.openUntil = 0;
  u.errorRate *= 0.9;
  u.latencyMs = u.latencyMs === 0 ? ms : u.latencyMs * 0.9 + ms * 0.1;
  if (keepRecent) {
    u.recent[u.recentAt] = ms;
    u.recentAt = (u.recentAt + 1) % RECENT;
  }
}

/** A probe answered: the node's failures and circuit start over. */
export function recordProbeSuccess(u: Upstream): void {
  u.failures = 0;
  u.openUntil = 0;
}

/** A probe failed: a failure like a failed request's, and a dead node's circuit stays open (re-armed each time). */
export function recordProbeFailure(u: Upstream, routing: RoutingOptions): void {
  u.failures++;
  if (u.failures >= routing.breakerFailures) u.openUntil = monotonicNow() + routing.breakerCooldownMs;
}

/** Upstream URLs may embed provider keys in the path or userinfo; keep only the origin for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "[invalid url]";
  }
}
