// The JSON-RPC core of one network, shared by every transport: method policy, locally answered methods,
// custom platform_ methods, and one upstream round trip for everything proxied in a call set.
import { GatewayError, toGatewayError, type JsonValue } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { RpcCall, RpcOutcome } from "../chain/upstreamReplies.js";
import type { Access } from "../keys/access.js";
import { checkMethodAllowed, WRITE_METHODS } from "./methodPolicy.js";
import type { ImmutableCache } from "./immutableCache.js";
import type { InflightReads } from "./inflightReads.js";
import type { MaybePromise } from "../maybePromise.js";
import { capCallGas, DEFAULT_CALL_GAS_CAP, EXECUTING_METHODS } from "./callGasCap.js";
import type { NodeShares } from "../limits/nodeShares.js";

export interface CallContext {
  access: Access;
  /** Aborted when the caller gives up (a Connect deadline, a disconnect): no failover starts after it. */
  signal?: AbortSignal;
  /** The caller's address, for what is held per caller without a key (filters). */
  clientIp?: string;
  /** The transport the call came by (metrics). */
  transport?: string;
}

export type Params = JsonValue[] | { [key: string]: JsonValue };

export interface CoreCall {
  method: string;
  params: Params;
}

export type CustomMethod = (ctx: CallContext, params: JsonValue[]) => Promise<JsonValue>;

export interface RpcDispatcher {
  /** Outcomes in call order: at once when every call was answered locally, else a promise. */
  callMany(ctx: CallContext, calls: CoreCall[]): MaybePromise<RpcOutcome[]>;
}

export class RpcCore implements RpcDispatcher {
  /** Answers that never change for a network, with their JSON text (no JSON.stringify per call). */
  private readonly local: Map<string, { value: JsonValue; raw: string }>;
  private readonly custom = new Map<string, CustomMethod>();
  /** The most gas a call that runs code may carry (callGasCap.ts). */
  private gasCap = DEFAULT_CALL_GAS_CAP;
  /** Per-caller shares of the node for calls that make it work; absent, unshared. */
  private shares: NodeShares | undefined;

  constructor(
    private readonly pool: UpstreamPool,
    readonly chainId: number,
    /** Called before a keyed write goes upstream (the daily transaction quota); throwing refuses it. */
    private readonly beforeWrite: (ctx: CallContext) => Promise<void> = async () => undefined,
    /** Immutable answers served without a round trip (see immutableCache.ts for the reorg-safe rules). */
    readonly cache?: ImmutableCache,
    /** Sees every call's outcome and the seconds its request took in the core (metrics). */
    private readonly observe?: (method: string, outcome: RpcOutcome, transport: string, seconds: number) => void,
    /** Shares in-flight upstream reads between identical calls; absent, every call goes upstream. */
    private readonly inflight?: InflightReads,
  ) {
    // Answered without a round trip: they never change for a network.
    const constant = (value: JsonValue) => ({ value, raw: JSON.stringify(value) });
    this.local = new Map([
      ["eth_chainId", constant("0x" + chainId.toString(16))],
      ["net_version", constant(String(chainId))],
    ]);
  }

  /** Answers `method` with a constant, locally (a network-wide fact the node may state otherwise). */
  answerLocally(method: string, value: JsonValue): void {
    this.local.set(method, { value, raw: JSON.stringify(value) });
    this.forgetFacts();
  }

  /** Bounds the node's work per call (gas) and per caller (concurrent heavy calls). */
  boundNodeWork(gasCap: bigint, shares?: NodeShares): void {
    this.gasCap = gasCap;
    this.shares = shares;
  }

  /** Registers a gateway-implemented method (platform_*). */
  register(method: string, fn: CustomMethod): void {
    this.custom.set(method, fn);
    this.forgetFacts();
  }

  private readonly facts = new Map<string, MethodFacts>();
  private lastMethod = "";
  private lastFacts: MethodFacts | undefined;

  /** What the core does with a method, found once per name rather than in five tables per call. */
  private factsOf(method: string): MethodFacts {
    if (method === this.lastMethod && this.lastFacts !== undefined) return this.lastFacts;
    let f = this.facts.get(method);
    if (f === undefined) {
      f = {
        custom: this.custom.get(method),
        local: this.local.get(method),
        executing: EXECUTING_METHODS.has(method),
        write: WRITE_METHODS.has(method),
        heavy: HEAVY_METHODS.has(method),
      };
      // Method names are caller-chosen: only short ones are remembered, and at most a thousand.
      if (this.facts.size < MAX_FACTS && method.length <= MAX_FACTS_NAME) this.facts.set(method, f);
    }
    this.lastMethod = method;
    this.lastFacts = f;
    return f;
  }

  private forgetFacts(): void {
    this.facts.clear();
    this.lastFacts = undefined;
  }

  private heavyCall(calls: CoreCall[]): CoreCall | undefined {
    for (let i = 0; i < calls.length; i++) if (this.factsOf(calls[i]!.method).heavy) return calls[i];
    return undefined;
  }

  async call(ctx: CallContext, method: string, params: Params): Promise<JsonValue> {
    const [outcome] = await this.callMany(ctx, [{ method, params }]);
    if (!outcome) throw new GatewayError("internal", "no outcome");
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  callMany(ctx: CallContext, calls: CoreCall[]): MaybePromise<RpcOutcome[]> {
    const started = this.observe ? performance.now() : 0;
    // A request that makes the node work takes one of its caller's slots (one node request) until answered.
    if (this.shares !== undefined) {
      const heavy = this.heavyCall(calls);
      if (heavy !== undefined) {
        return this.shares
          .run(callerOf(ctx), heavy.method, () => Promise.resolve(this.callAll(ctx, calls, started)))
          .catch((err: unknown) => {
            const error = toGatewayError(err);
            return calls.map((): RpcOutcome => ({ ok: false, error }));
          });
      }
    }
    return this.callAll(ctx, calls, started);
  }

  private callAll(ctx: CallContext, calls: CoreCall[], started: number): MaybePromise<RpcOutcome[]> {
    const outcomes: (RpcOutcome | Promise<RpcOutcome>)[] = new Array(calls.length);
    const proxied: Proxied[] = [];
    // Writes first pass the daily quota (async); everything else is routed synchronously, in request order.
    let quotaChecks: Promise<void>[] | undefined;
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index]!;
      try {
        const facts = this.factsOf(call.method);
        checkMethodAllowed(call.method, ctx.access, facts.custom !== undefined);
        if (!Array.isArray(call.params)) {
          throw new GatewayError("invalid_params", `Invalid params: ${call.method} takes positional params (a JSON array)`);
        }
        const params = facts.executing ? capCallGas(call.method, call.params, this.gasCap) : call.params;
        if (facts.write) {
          (quotaChecks ??= []).push(
            this.beforeWrite(ctx)
              .then(() => this.route(ctx, index, call.method, params, facts, outcomes, proxied))
              .catch((err: unknown) => void (outcomes[index] = { ok: false, error: toGatewayError(err) })),
          );
        } else this.route(ctx, index, call.method, params, facts, outcomes, proxied);
      } catch (err) {
        outcomes[index] = { ok: false, error: toGatewayError(err) };
      }
    }
    return quotaChecks
      ? Promise.all(quotaChecks).then(() => this.finish(ctx, calls, outcomes, proxied, started))
      : this.finish(ctx, calls, outcomes, proxied, started);
  }

  private finish(
    ctx: CallContext,
    calls: CoreCall[],
    outcomes: (RpcOutcome | Promise<RpcOutcome>)[],
    proxied: Proxied[],
    started: number,
  ): MaybePromise<RpcOutcome[]> {
    // Answered locally or from the cache, every outcome is already there: returned as is, no promise.
    if (proxied.length === 0) return this.settled(ctx, started, calls, outcomes);
    return this.sendUpstream(proxied, outcomes, ctx.signal, () => this.settled(ctx, started, calls, outcomes));
  }

  /** The outcomes observed, once every one is there. */
  private settled(ctx: CallContext, started: number, calls: CoreCall[], outcomes: (RpcOutcome | Promise<RpcOutcome>)[]): MaybePromise<RpcOutcome[]> {
    if (allSettled(outcomes)) return this.observed(ctx, started, calls, outcomes);
    return Promise.all(outcomes).then((all) => this.observed(ctx, started, calls, all));
  }

  private observed(ctx: CallContext, started: number, calls: CoreCall[], settled: RpcOutcome[]): RpcOutcome[] {
    if (this.observe) {
      const seconds = (performance.now() - started) / 1000;
      const transport = ctx.transport ?? "other";
      for (let i = 0; i < settled.length; i++) this.observe(calls[i]!.method, settled[i]!, transport, seconds);
    }
    return settled;
  }

  /** Local answer, cached answer, custom method, a coalesced in-flight read, or a new upstream call. */
  private route(
    ctx: CallContext,
    index: number,
    method: string,
    params: JsonValue[],
    { custom, local }: MethodFacts,
    outcomes: (RpcOutcome | Promise<RpcOutcome>)[],
    proxied: Proxied[],
  ): void {
    const cached = local === undefined ? this.cache?.getEntry(method, params) : undefined;
    if (local !== undefined) outcomes[index] = { ok: true, result: local.value, raw: local.raw };
    else if (cached) outcomes[index] = { ok: true, result: cached.value, raw: cached.raw };
    else if (custom) outcomes[index] = settle(custom(ctx, params));
    else {
      const key = this.inflight?.keyOf(method, params);
      const joined = key === undefined ? undefined : this.inflight!.join(key);
      if (joined) outcomes[index] = joined;
      else proxied.push({ index, key, call: { method, params } });
    }
  }

  /**
   * One upstream round trip for every new proxied call of a request, in request order: the node's answers
   * are put in `outcomes` in place, then `then` runs. One reaction for the whole request, not a promise per
   * call and a Promise.all over them (a batch of 40 made 81).
   */
  private sendUpstream(
    proxied: Proxied[],
    outcomes: (RpcOutcome | Promise<RpcOutcome>)[],
    caller: AbortSignal | undefined,
    then: () => MaybePromise<RpcOutcome[]>,
  ): Promise<RpcOutcome[]> {
    proxied.sort((a, b) => a.index - b.index);
    // A read that later identical reads may join fails over whoever gave up: only a call no one else
    // waits on stops at its caller's deadline.
    const shared = proxied.some((p) => p.key !== undefined);
    const sent = this.pool.callMany(
      proxied.map((p) => p.call),
      shared ? undefined : caller,
    );
    // Each answer put in its place; the first call's outcome is the value (what a coalesced read's joiners wait on).
    const place = (rs: RpcOutcome[]): RpcOutcome => {
      this.kept(proxied, rs);
      for (let i = 0; i < proxied.length; i++) outcomes[proxied[i]!.index] = rs[i] ?? noAnswer();
      return outcomes[proxied[0]!.index] as RpcOutcome;
    };
    const placeError = (err: unknown): RpcOutcome => {
      const error = toGatewayError(err);
      for (const p of proxied) outcomes[p.index] = { ok: false, error };
      return outcomes[proxied[0]!.index] as RpcOutcome;
    };
    if (!shared)
      return sent.then(
        (rs) => {
          place(rs);
          return then();
        },
        (err: unknown) => {
          placeError(err);
          return then();
        },
      );
    // Later identical reads join a coalesced call's own outcome, there once the node answered (not once the
    // rest of this request is).
    const placed = sent.then(place, placeError);
    proxied.forEach((p, i) => {
      if (p.key !== undefined) this.inflight!.track(p.key, i === 0 ? placed : placed.then(() => outcomes[p.index] as RpcOutcome));
    });
    return placed.then(then);
  }

  /** Puts each of the node's answers that the cache may keep in it. */
  private kept(proxied: Proxied[], rs: RpcOutcome[]): void {
    if (this.cache === undefined) return;
    for (let i = 0; i < rs.length; i++) {
      const r = rs[i]!;
      const { call } = proxied[i]!;
      // Touching r.result parses a raw answer: only for what the cache may keep.
      if (r.ok) {
        if (call.method === "eth_blockNumber") this.cache.observeHead(r.result);
        if (this.cache.mayHold(call.method, call.params)) this.cache.put(call.method, call.params, r.result, r.raw);
      }
    }
  }
}

const noAnswer = (): RpcOutcome => ({ ok: false, error: new GatewayError("internal", "upstream returned no answer") });

/** What a per-caller node share counts: code execution and log scans. */
const HEAVY_METHODS = new Set([...EXECUTING_METHODS, "eth_getLogs", "eth_getFilterLogs"]);

const MAX_FACTS = 1_000;
const MAX_FACTS_NAME = 64;

interface MethodFacts {
  custom: CustomMethod | undefined;
  /** A constant answer (eth_chainId). */
  local: { value: JsonValue; raw: string } | undefined;
  /** Runs code: its gas is capped. */
  executing: boolean;
  /** Passes the write quota first. */
  write: boolean;
  /** Takes one of its caller's node shares. */
  heavy: boolean;
}

function callerOf(ctx: CallContext): string {
  return ctx.clientIp !== undefined && ctx.clientIp !== "unknown" ? `ip:${ctx.clientIp}` : ctx.access.kind === "key" ? `key:${ctx.access.keyId}` : "public";
}

interface Proxied {
  index: number;
  /** Coalescing key when identical later reads may join this call. */
  key: string | undefined;
  call: RpcCall;
}

function allSettled(outcomes: (RpcOutcome | Promise<RpcOutcome>)[]): outcomes is RpcOutcome[] {
  for (let i = 0; i < outcomes.length; i++) if (outcomes[i] instanceof Promise) return false;
  return true;
}

function settle(p: Promise<JsonValue>): Promise<RpcOutcome> {
  return p.then(
    (result) => ({ ok: true as const, result }),
    (err: unknown) => ({ ok: false as const, error: toGatewayError(err) }),
  );
}
