// "N requests per window per caller" shared by replicas through Redis: bottleneck's clustered reservoir
// (refilled to N every window) per caller. Taking is non-blocking: reserve `weight` by decrementing the reservoir; if that went below zero, give it
// back and refuse. bottleneck makes the decrement atomic, in-process or, clustered, in Redis (a Lua script),
// so replicas sharing Redis share one reservoir per caller.
import Bottleneck from "bottleneck";
import { sweepIdleCallers, type CallerLimiter, type LimitDecision } from "./windowLimiter.js";
import { monotonicNow } from "../clock.js";

export interface ClusteredWindowLimiterOptions {
  limit: number;
  windowMs: number;
  /** Names the limiter and its Redis keys. */
  id: string;
  /** Shared Redis connection (bottleneck clustering). */
  connection: Bottleneck.IORedisConnection;
}

interface Entry {
  limiter: Bottleneck;
  started: number;
  lastUsed: number;
}

export class ClusteredWindowLimiter implements CallerLimiter {
  // Our own map rather than Bottleneck.Group: a limiter created while Redis was down keeps a rejected
  // `ready` forever, so a failed one must be dropped and re-created, which Group does not allow cleanly.
  private readonly callers = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: ClusteredWindowLimiterOptions) {
    this.sweeper = sweepIdleCallers(this.callers, options.windowMs, (caller) => this.drop(caller));
  }

  async take(caller: string, weight = 1): Promise<LimitDecision> {
    const entry = this.entry(caller);
    entry.lastUsed = monotonicNow();
    let left: number;
    try {
      left = await entry.limiter.incrementReservoir(-weight);
    } catch (err) {
      this.drop(caller, false);
      throw err;
    }
    const allowed = left >= 0;
    if (!allowed) await entry.limiter.incrementReservoir(weight);
    const elapsed = (monotonicNow() - entry.started) % this.options.windowMs;
    return {
      allowed,
      limit: this.options.limit,
      remaining: Math.max(0, allowed ? left : left + weight),
      resetSeconds: Math.max(1, Math.ceil((this.options.windowMs - elapsed) / 1000)),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    // A shared connection is closed by its owner, which ends every limiter on it.
    for (const caller of [...this.callers.keys()]) this.drop(caller, false);
  }

  private entry(caller: string): Entry {
    let e = this.callers.get(caller);
    if (!e) {
      const { limit, windowMs, id, connection } = this.options;
      const limiter = new Bottleneck({
        id: `${id}-${caller}`,
        reservoir: limit,
        reservoirRefreshAmount: limit,
        reservoirRefreshInterval: windowMs,
        // Redis keys expire after a few idle windows.
        timeout: Math.max(5 * 60_000, windowMs * 3),
        datastore: "ioredis",
        connection,
        clearDatastore: false,
      });
      limiter.on("error", () => undefined);
      // Its Redis setup can fail while Redis is away; take() reports that, nothing else should.
      limiter.ready().catch(() => undefined);
      e = { limiter, started: monotonicNow(), lastUsed: monotonicNow() };
      this.callers.set(caller, e);
    }
    return e;
  }

  private drop(caller: string, disconnect = true): void {
    const e = this.callers.get(caller);
    this.callers.delete(caller);
    // With a shared connection this only unsubscribes the limiter. Not after a Redis failure: bottleneck's
    // unsubscribe would then reject where nobody can catch it (the connection owner cleans up instead).
    if (e && disconnect)
      void Promise.resolve()
        .then(() => e.limiter.disconnect(false))
        .catch(() => undefined);
  }
}
