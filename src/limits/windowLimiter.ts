// "N requests per window per caller" in one process: a counter per caller, refilled to N every window
// (the window starts at the caller's first request). Synchronous and allocation-free on the hot path, where
// bottleneck's local datastore cost a measurable share of each proxied call (bench/README.md).
// Replicas sharing Redis use ClusteredWindowLimiter (bottleneck) with the same semantics.
import { monotonicNow } from "../clock.js";

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the caller's window refills. */
  resetSeconds: number;
}

/** What RateLimits needs of a limiter, local or clustered. */
export interface CallerLimiter {
  take(caller: string, weight?: number): LimitDecision | Promise<LimitDecision>;
  close(): Promise<void>;
}

export interface WindowLimiterOptions {
  limit: number;
  windowMs: number;
}

/**
 * Forgets callers idle for several windows (never sooner, so a window is not reset early), checking at most
 * once a minute. Shared by the local and the clustered limiter.
 */
export function sweepIdleCallers(callers: Map<string, { lastUsed: number }>, windowMs: number, forget: (caller: string) => void): NodeJS.Timeout {
  const idleMs = Math.max(5 * 60_000, windowMs * 3);
  const sweeper = setInterval(
    () => {
      const now = monotonicNow();
      for (const [caller, e] of callers) if (now - e.lastUsed > idleMs) forget(caller);
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();
  return sweeper;
}

interface Window {
  started: number;
  left: number;
  lastUsed: number;
}

export class WindowLimiter implements CallerLimiter {
  private readonly callers = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: WindowLimiterOptions) {
    this.sweeper = sweepIdleCallers(this.callers, options.windowMs, (caller) => this.callers.delete(caller));
  }

  take(caller: string, weight = 1): LimitDecision {
    const { limit, windowMs } = this.options;
    const now = monotonicNow();
    let w = this.callers.get(caller);
    if (!w) this.callers.set(caller, (w = { started: now, left: limit, lastUsed: now }));
    // Refill at each window boundary since the caller's first request, like bottleneck's reservoir refresh.
    const elapsed = now - w.started;
    if (elapsed >= windowMs) {
      w.started += Math.floor(elapsed / windowMs) * windowMs;
      w.left = limit;
    }
    w.lastUsed = now;
    const allowed = w.left - weight >= 0;
    if (allowed) w.left -= weight;
    return { allowed, limit, remaining: w.left, resetSeconds: Math.max(1, Math.ceil((windowMs - (now - w.started)) / 1000)) };
  }

  /** Seconds until the caller's window refills, while one is open (undefined when it has none). Counts nothing. */
  resetIn(caller: string): number | undefined {
    const w = this.callers.get(caller);
    if (!w) return undefined;
    const elapsed = monotonicNow() - w.started;
    return elapsed >= this.options.windowMs ? undefined : Math.max(1, Math.ceil((this.options.windowMs - elapsed) / 1000));
  }

  /** Seconds until the caller's window refills, when it is spent now; undefined when a request would pass. Counts nothing. */
  spent(caller: string): number | undefined {
    const w = this.callers.get(caller);
    if (!w || w.left > 0) return undefined;
    const elapsed = monotonicNow() - w.started;
    return elapsed >= this.options.windowMs ? undefined : Math.max(1, Math.ceil((this.options.windowMs - elapsed) / 1000));
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.callers.clear();
  }
}
