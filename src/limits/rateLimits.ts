// The gateway's rate limits, one policy for every transport: per network and caller (API key, else IP)
// N requests per window (a batch of n counts n; per-key overrides), a stricter limit on try-it-out ZKT,
// and a per-key daily transaction quota. Over a limit: a rate_limited GatewayError (429, Retry-After) and
// the request does nothing. If the shared Redis fails, the configured policy (open or closed) applies.
import { DoublingDelay, type DoublingDelaySettings } from "../resilience/doublingDelay.js";
import Bottleneck from "bottleneck";
import { Redis } from "ioredis";
import { GatewayError } from "../errors.js";
import { andThen } from "../maybePromise.js";
import type { Logger } from "../log/logger.js";
import { WindowLimiter, type CallerLimiter, type LimitDecision } from "./windowLimiter.js";
import { ClusteredWindowLimiter } from "./clusteredWindowLimiter.js";
import { type UsageReport, UsageMeter } from "./usageMeter.js";
import { monotonicNow } from "../clock.js";

/** A key's use, its limits and when they reset (GET /zgt/<key>/usage); 0 for a limit means none. */
export interface KeyUsage extends UsageReport {
  limits: { requestsPerMinute: number; writesPerDay: number; writesPerMonth: number };
  /** Seconds until each window refills, when this process knows (0 otherwise). */
  resets: { requestsSeconds: number; writesDaySeconds: number; writesMonthSeconds: number };
}

/**
 * Whom a limit counts: the public (by IP), or an API key, with its own limits when it has them (the keys'
 * Access has this shape; the limits need no more of it).
 */
export type LimitedCaller =
  | { kind: "public" }
  | { kind: "key"; keyId: string; requestsPerMinute?: number | null; transactionsPerDay?: number | null; writesPerMonth?: number | null };

export interface RateLimitConfig {
  requestsPerWindow: number;
  windowMs: number;
  tryItOutRequestsPerWindow: number;
  /** Requests per client IP per window across its free keys (twice requestsPerWindow when unset). */
  perIpRequestsPerWindow?: number;
  /** Writes per key per day and per 30 days, across networks (unlimited when unset; a key's transactionsPerDay wins). */
  writesPerDay?: number | undefined;
  writesPerMonth?: number | undefined;
  /** Admin API calls per client IP per window, on their own budget (the API's request limit is not touched). */
  adminAttemptsPerWindow?: number;
  /** Test-fund credits (POST /zgt/<key>/faucet) per key per day (10 when unset). */
  faucetCreditsPerDay?: number;
  /** When Redis is unreachable: "open" serves unlimited, "closed" refuses with 503. */
  failMode: "open" | "closed";
  redisUrl?: string;
  /** How long a limiter decision may take before the fail policy applies. */
  decisionTimeoutMs: number;
  /** Namespace of the limiters' Redis keys (tests isolate runs with it). */
  keyPrefix?: string;
  /** The wait before a failing Redis is tried again, doubling (config resilience.rateLimitStoreProbe). */
  storeProbe?: DoublingDelaySettings;
}

export type LimitScope = "requests" | "requests-per-ip" | "try-it-out" | "transactions" | "writes-month" | "faucet" | "admin-attempts";

export class RateLimits {
  /** What each key used (usageOf). */
  private readonly usage = new UsageMeter();
  private readonly limiters: CallerLimiter[] = [];
  /** scope -> network -> limit -> limiter: nested maps, so no key string is built per request. */
  private readonly byScope = new Map<LimitScope, Map<string, Map<number, CallerLimiter>>>();
  private readonly connection: Bottleneck.IORedisConnection | undefined;
  private readonly redis: Redis | undefined;

  /** New limits from a reloaded configuration: the next decisions use them (limiters per limit are made anew). */
  reconfigure(next: Omit<RateLimitConfig, "redisUrl" | "keyPrefix">): void {
    Object.assign(this.config, next);
  }

  /** Whether the shared limit store (Redis) takes decisions: false while its breaker is open; undefined without one. */
  get sharedStoreUp(): boolean | undefined {
    return this.redis === undefined ? undefined : !this.breaker.open;
  }
  private degraded = false;
  /**
   * Circuit breaker on the shared store: once a decision fails, decisions are made at once by the fail policy
   * (no request waits decisionTimeoutMs for a store that is down) until `retryAt`, when one request probes the
   * store again; each failed probe doubles the wait (up to 1 s, and Redis reconnecting ends it at once: limits
   * held again 16 s after Redis was back), a success closes the breaker. Requests arriving while the probe is
   * out wait for it rather than pass: a burst at recovery let 96 of 100 through a limit of 60.
   */
  private readonly breaker: { open: boolean; retryAt: number; backoff: DoublingDelay; probe: Promise<boolean> | undefined };

  constructor(
    private readonly config: RateLimitConfig,
    private readonly log: Logger,
    /** Called for each refusal (metrics). */
    private readonly onReject: (network: string, scope: LimitScope) => void = () => undefined,
  ) {
    this.breaker = { open: false, retryAt: 0, backoff: new DoublingDelay(config.storeProbe ?? { firstMs: 250, maxMs: 1_000 }), probe: undefined };
    if (config.redisUrl) {
      // While Redis is away a decision times out (decisionTimeoutMs) and the fail policy answers; commands
      // queued meanwhile are dropped after one failed reconnect, so the queue stays bounded.
      this.redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
      this.redis.on("error", () => undefined);
      // Redis answers again: the next decision probes it rather than wait out the back-off.
      this.redis.on("ready", () => {
        if (this.breaker.open) this.breaker.retryAt = 0;
      });
      this.connection = new Bottleneck.IORedisConnection({ client: this.redis });
      this.connection.on("error", () => undefined);
    }
  }

  /**
   * Counts `weight` requests for the caller on a network; throws rate_limited when over. Synchronous with the
   * local limiter (the decision is made at once: no promise per request on the hot path), a promise with Redis.
   */
  checkRequests(network: string, access: LimitedCaller, ip: string, weight: number): LimitDecision | undefined | Promise<LimitDecision | undefined> {
    const decided = this.takeRequests(network, access, ip, weight);
    if (access.kind !== "key") return decided;
    const keyId = access.keyId;
    return andThen(decided, (d) => {
      this.usage.requests(network, keyId, weight);
      return d;
    });
  }

  /** A caller's request limit per window: its key's own per-minute one scaled to the window, else the default. */
  private requestLimit(perKey: number | undefined): number {
    return perKey ? Math.max(1, Math.round((perKey * this.config.windowMs) / 60_000)) : this.config.requestsPerWindow;
  }

  /** The local limiter of a scope, network and limit when one was made (counts nothing). */
  private localLimiter(scope: LimitScope, network: string, limit: number): WindowLimiter | undefined {
    const l = this.byScope.get(scope)?.get(network)?.get(limit);
    return l instanceof WindowLimiter ? l : undefined;
  }

  private takeRequests(network: string, access: LimitedCaller, ip: string, weight: number): LimitDecision | undefined | Promise<LimitDecision | undefined> {
    // requestLimit(ownPerMinute(access)), written out: this runs per request.
    const perKey = access.kind === "key" ? (access.requestsPerMinute ?? undefined) : undefined;
    const limit = perKey ? Math.max(1, Math.round((perKey * this.config.windowMs) / 60_000)) : this.config.requestsPerWindow;
    const byKey = this.take("requests", network, callerOf(access, ip), limit, this.config.windowMs, weight, "requests");
    // Free keys are self-service: whatever number of them one address holds, together they get its share.
    // A key with limits of its own (an operator's) is not held to it; the public path already counts by IP.
    if (access.kind !== "key" || perKey) return byKey;
    const perIp = this.config.perIpRequestsPerWindow ?? 2 * this.config.requestsPerWindow;
    return andThen(byKey, (d) =>
      andThen(this.take("requests-per-ip", network, ipCaller(ip), perIp, this.config.windowMs, weight, "requests from one address (across its keys)"), () => d),
    );
  }

  /**
   * The refusal a request of this caller would get now, without counting it, when its request window is spent:
   * a request whose body is still arriving is then refused without reading or parsing it. This process's view
   * (undefined with Redis, where asking would cost a round trip per request).
   */
  spentRequests(network: string, access: LimitedCaller, ip: string): GatewayError | undefined {
    if (this.connection) return undefined;
    const limit = this.requestLimit(ownPerMinute(access));
    const reset = this.localLimiter("requests", network, limit)?.spent(callerOf(access, ip));
    if (reset === undefined) return undefined;
    this.onReject(network, "requests");
    return new GatewayError("rate_limited", `rate limit exceeded: at most ${limit} requests per ${formatWindow(this.config.windowMs)}; retry in ${reset} s`, {
      retryAfterSeconds: reset,
      details: { limit, windowSeconds: this.config.windowMs / 1000, retryAfterSeconds: reset },
    });
  }

  /**
   * One admin API call from `ip`, on a budget of its own: a flood of wrong tokens spends it, not the IP's API
   * limit, so the real operator's JSON-RPC from that address goes on (and the API's load does not lock out
   * the admin API). Past it, every admin call from the IP is refused unread: a right guess would otherwise pass.
   */
  checkAdminAttempt(network: string, ip: string): LimitDecision | undefined | Promise<LimitDecision | undefined> {
    return this.take("admin-attempts", network, ipCaller(ip), this.config.adminAttemptsPerWindow ?? 120, this.config.windowMs, 1, "admin API calls");
  }

  /** Like spentRequests, for the try-it-out window of a client address (public ZKT submissions). */
  spentTryItOut(network: string, ip: string): GatewayError | undefined {
    if (this.connection) return undefined;
    const limit = this.config.tryItOutRequestsPerWindow;
    const reset = this.localLimiter("try-it-out", network, limit)?.spent(ipCaller(ip));
    if (reset === undefined) return undefined;
    this.onReject(network, "try-it-out");
    return new GatewayError(
      "rate_limited",
      `rate limit exceeded: at most ${limit} try-it-out submissions per ${formatWindow(this.config.windowMs)}; retry in ${reset} s`,
      {
        retryAfterSeconds: reset,
        details: { limit, windowSeconds: this.config.windowMs / 1000, retryAfterSeconds: reset },
      },
    );
  }

  async checkTryItOut(network: string, ip: string): Promise<LimitDecision | undefined> {
    return await this.take("try-it-out", network, ipCaller(ip), this.config.tryItOutRequestsPerWindow, this.config.windowMs, 1, "try-it-out submissions");
  }

  /** One of the key's daily test-fund credits (every key has the same number); across networks. */
  async checkFaucet(access: LimitedCaller): Promise<void> {
    if (access.kind !== "key") return;
    await this.take("faucet", "all", keyCaller(access.keyId), this.config.faucetCreditsPerDay ?? 10, 86_400_000, 1, "test-fund credits");
  }

  /**
   * The key's write quotas, when it has any: per day (its own transactionsPerDay, else KEY_WRITES_PER_DAY) and
   * per 30 days (its own writesPerMonth, else KEY_WRITES_PER_MONTH), one count across networks and replicas.
   */
  async checkTransaction(access: LimitedCaller): Promise<void> {
    if (access.kind !== "key") return;
    const perDay = access.transactionsPerDay ?? this.config.writesPerDay;
    const perMonth = access.writesPerMonth ?? this.config.writesPerMonth;
    if (perMonth) await this.take("writes-month", "all", keyCaller(access.keyId), perMonth, 30 * 86_400_000, 1, "writes (monthly quota)", "quota_exceeded");
    if (perDay) await this.take("transactions", "all", keyCaller(access.keyId), perDay, 86_400_000, 1, "writes (daily quota)", "quota_exceeded");
    this.usage.write(access.keyId);
  }

  /** A key's use on `network`'s limits as this process counted it, with its limits and their resets. */
  usageOf(network: string, access: Extract<LimitedCaller, { kind: "key" }>): KeyUsage {
    const caller = keyCaller(access.keyId);
    const perKey = ownPerMinute(access);
    const requestLimit = this.requestLimit(perKey);
    const perDay = access.transactionsPerDay ?? this.config.writesPerDay ?? 0;
    const perMonth = access.writesPerMonth ?? this.config.writesPerMonth ?? 0;
    const resetIn = (scope: LimitScope, net: string, limit: number): number =>
      (limit > 0 ? this.localLimiter(scope, net, limit)?.resetIn(caller) : undefined) ?? 0;
    return {
      ...this.usage.report(network, access.keyId),
      limits: {
        requestsPerMinute: perKey ?? Math.round((this.config.requestsPerWindow * 60_000) / this.config.windowMs),
        writesPerDay: perDay,
        writesPerMonth: perMonth,
      },
      resets: {
        requestsSeconds: resetIn("requests", network, requestLimit),
        writesDaySeconds: resetIn("transactions", "all", perDay),
        writesMonthSeconds: resetIn("writes-month", "all", perMonth),
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.limiters.map((l) => l.close()));
    await this.connection?.disconnect(false).catch(() => undefined);
  }

  /** The limiter of a scope, network and limit (a scope has one window), found without building a key. */
  private limiterFor(scope: LimitScope, network: string, limit: number, windowMs: number): CallerLimiter {
    // The few limiters a stream of requests uses, found without a lookup.
    for (const r of this.recent) if (r.limit === limit && r.scope === scope && r.network === network) return r.limiter;
    const limiter = this.madeLimiter(scope, network, limit, windowMs);
    this.recent[this.nextRecent] = { scope, network, limit, limiter };
    this.nextRecent = (this.nextRecent + 1) % RECENT_LIMITERS;
    return limiter;
  }
  private readonly recent: { scope: LimitScope; network: string; limit: number; limiter: CallerLimiter }[] = [];
  private nextRecent = 0;

  private madeLimiter(scope: LimitScope, network: string, limit: number, windowMs: number): CallerLimiter {
    let byNetwork = this.byScope.get(scope);
    if (!byNetwork) this.byScope.set(scope, (byNetwork = new Map()));
    let byLimit = byNetwork.get(network);
    if (!byLimit) byNetwork.set(network, (byLimit = new Map()));
    let limiter = byLimit.get(limit);
    if (!limiter) {
      const id = `${this.config.keyPrefix ?? "cgw"}:${scope}:${network}:${limit}:${windowMs}`;
      limiter = this.connection ? new ClusteredWindowLimiter({ id, limit, windowMs, connection: this.connection }) : new WindowLimiter({ limit, windowMs });
      byLimit.set(limit, limiter);
      this.limiters.push(limiter);
    }
    return limiter;
  }

  private take(
    scope: LimitScope,
    network: string,
    caller: string,
    limit: number,
    windowMs: number,
    weight: number,
    what: string,
    /** What a refusal is: a rate limit, or a quota spent (QUOTA_EXCEEDED). */
    kind: "rate_limited" | "quota_exceeded" = "rate_limited",
  ): LimitDecision | undefined | Promise<LimitDecision | undefined> {
    let probing: ((ok: boolean) => void) | undefined;
    if (this.breaker.open) {
      const probe = this.breaker.probe;
      if (probe) return probe.then((ok) => (ok ? this.take(scope, network, caller, limit, windowMs, weight, what, kind) : this.failPolicy()));
      const now = monotonicNow();
      if (now < this.breaker.retryAt) return this.failPolicy();
      // This request is the probe; the ones arriving meanwhile wait for its outcome.
      this.breaker.retryAt = now + this.breaker.backoff.ms;
      this.breaker.probe = new Promise<boolean>((resolve) => (probing = resolve));
    }
    const limiter = this.limiterFor(scope, network, limit, windowMs);
    const taken = limiter.take(caller, weight);
    // Only a clustered (Redis) decision can hang or fail; a local one is already made.
    if (!(taken instanceof Promise)) return this.decide(taken, scope, network, limit, windowMs, weight, what, kind);
    const probed = (ok: boolean): void => {
      if (!probing) return;
      this.breaker.probe = undefined;
      probing(ok);
    };
    return withTimeout(taken, this.config.decisionTimeoutMs).then(
      (d) => {
        probed(true);
        return this.decide(d, scope, network, limit, windowMs, weight, what, kind);
      },
      (err: unknown) => {
        // Before the fail policy, which throws when closed.
        this.noteStoreFailure(err as Error);
        probed(false);
        return this.failPolicy();
      },
    );
  }

  /** A decision made: counted (returned) or refused (rate_limited thrown). */
  private decide(
    decision: LimitDecision,
    scope: LimitScope,
    network: string,
    limit: number,
    windowMs: number,
    weight: number,
    what: string,
    kind: "rate_limited" | "quota_exceeded",
  ): LimitDecision {
    if (this.degraded) {
      this.degraded = false;
      this.breaker.open = false;
      this.breaker.backoff.reset();
      this.log.info("rate limiter store recovered");
    }
    if (!decision.allowed) {
      this.onReject(network, scope);
      const n = weight > 1 ? ` (this request counts ${weight})` : "";
      throw new GatewayError(
        kind,
        `${kind === "rate_limited" ? "rate limit" : "quota"} exceeded: at most ${limit} ${what} per ${formatWindow(windowMs)}${n}; retry in ${decision.resetSeconds} s`,
        {
          retryAfterSeconds: decision.resetSeconds,
          details: { limit, windowSeconds: windowMs / 1000, retryAfterSeconds: decision.resetSeconds },
        },
      );
    }
    return decision;
  }

  /** The shared store could not decide: the breaker opens (or stays open, probed later). */
  private noteStoreFailure(err: Error): void {
    this.log.debug("rate limiter decision failed", { error: err.message, redis: this.redis?.status });
    if (!this.degraded) {
      this.degraded = true;
      this.log.error(`rate limiter store unavailable; failing ${this.config.failMode}`, { error: err.message });
    }
    this.breaker.open = true;
    this.breaker.retryAt = monotonicNow() + this.breaker.backoff.next();
  }

  /** What the configured policy answers without the store: open serves, closed refuses with 503. */
  private failPolicy(): undefined {
    if (this.config.failMode === "open") return undefined;
    throw new GatewayError("upstream_unavailable", "rate limiting is temporarily unavailable; try again shortly", { retryAfterSeconds: 1 });
  }
}

/** The longest a down store goes unprobed: limits hold again within about this of Redis answering. */

/** A key's own requests per minute, when the operator gave it one. */
function ownPerMinute(access: LimitedCaller): number | undefined {
  return access.kind === "key" ? (access.requestsPerMinute ?? undefined) : undefined;
}

export function callerOf(access: LimitedCaller, ip: string): string {
  return access.kind === "key" ? keyCaller(access.keyId) : ipCaller(ip);
}

/** How many (scope, network, limit) limiters RateLimits keeps at hand. */
const RECENT_LIMITERS = 4;

// The last caller names built: a stream from one caller is counted under one string, hashed once by the
// limiter's Map, rather than a new string per request.
let lastIp = "";
let lastIpCaller = "ip:";
let lastKeyId = "";
let lastKeyCaller = "key:";

function ipCaller(ip: string): string {
  if (ip !== lastIp) {
    lastIp = ip;
    lastIpCaller = `ip:${ip}`;
  }
  return lastIpCaller;
}

function keyCaller(keyId: string): string {
  if (keyId !== lastKeyId) {
    lastKeyId = keyId;
    lastKeyCaller = `key:${keyId}`;
  }
  return lastKeyCaller;
}

/** X-RateLimit-* headers for a decision. */
export function rateLimitHeaders(d: LimitDecision | undefined): Record<string, string> {
  return d ? { "x-ratelimit-limit": String(d.limit), "x-ratelimit-remaining": String(d.remaining), "x-ratelimit-reset": String(d.resetSeconds) } : {};
}

function formatWindow(ms: number): string {
  return ms === 60_000 ? "minute" : ms === 86_400_000 ? "day" : ms === 30 * 86_400_000 ? "30 days" : `${ms / 1000} s`;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e as Error);
      },
    );
  });
}
