// "N requests per window per caller", with bottleneck's reservoir (refilled to N every window) per caller.
// Taking is non-blocking: reserve `weight` by decrementing the reservoir; if that went below zero, give it
// back and refuse. bottleneck makes the decrement atomic, in-process or, clustered, in Redis (a Lua script),
// so replicas sharing Redis share one reservoir per caller.
import Bottleneck from "bottleneck";

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the caller's window refills. */
  resetSeconds: number;
}

export interface WindowLimiterOptions {
  limit: number;
  windowMs: number;
  /** Names the limiter and its Redis keys. */
  id: string;
  /** Shared Redis connection (bottleneck clustering); in-process when absent. */
  connection?: Bottleneck.IORedisConnection;
}

export class WindowLimiter {
  private readonly group: Bottleneck.Group;
  private readonly started = new Map<string, number>();

  constructor(private readonly options: WindowLimiterOptions) {
    this.group = new Bottleneck.Group({
      reservoir: options.limit,
      reservoirRefreshAmount: options.limit,
      reservoirRefreshInterval: options.windowMs,
      // Idle callers are forgotten only after several windows, so a window is never reset early.
      timeout: Math.max(5 * 60_000, options.windowMs * 3),
      id: options.id,
      ...(options.connection ? { datastore: "ioredis" as const, connection: options.connection, clearDatastore: false } : {}),
    });
  }

  async take(caller: string, weight = 1): Promise<LimitDecision> {
    const limiter = this.group.key(caller);
    if (!this.started.has(caller)) this.started.set(caller, Date.now());
    const left = await limiter.incrementReservoir(-weight);
    const allowed = left >= 0;
    if (!allowed) await limiter.incrementReservoir(weight);
    const elapsed = (Date.now() - this.started.get(caller)!) % this.options.windowMs;
    return { allowed, limit: this.options.limit, remaining: Math.max(0, allowed ? left : left + weight), resetSeconds: Math.max(1, Math.ceil((this.options.windowMs - elapsed) / 1000)) };
  }

  async close(): Promise<void> {
    // A shared Redis connection is closed by its owner, not by each limiter.
    if (!this.options.connection) await Promise.all(this.group.limiters().map(({ limiter }) => limiter.disconnect(false)));
  }
}
