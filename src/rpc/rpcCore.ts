// The JSON-RPC core of one network, shared by every transport: method policy, locally answered methods,
// custom platform_ methods, and one upstream round trip for everything proxied in a call set.
import { GatewayError, toGatewayError, type JsonValue } from "../errors.js";
import type { RpcCall, RpcOutcome, UpstreamPool } from "../chain/upstreamPool.js";
import { checkMethodAllowed, WRITE_METHODS, type Access } from "./methodPolicy.js";
import type { ImmutableCache } from "./immutableCache.js";

export interface CallContext {
  access: Access;
}

export type Params = JsonValue[] | { [key: string]: JsonValue };

export interface CoreCall {
  method: string;
  params: Params;
}

export type CustomMethod = (ctx: CallContext, params: JsonValue[]) => Promise<JsonValue>;

export interface RpcDispatcher {
  callMany(ctx: CallContext, calls: CoreCall[]): Promise<RpcOutcome[]>;
}

export class RpcCore implements RpcDispatcher {
  private readonly local: Map<string, JsonValue>;
  private readonly custom = new Map<string, CustomMethod>();

  constructor(
    private readonly pool: UpstreamPool,
    readonly chainId: number,
    /** Called before a keyed write goes upstream (the daily transaction quota); throwing refuses it. */
    private readonly beforeWrite: (ctx: CallContext) => Promise<void> = async () => undefined,
    /** Immutable answers served without a round trip (see immutableCache.ts for the reorg-safe rules). */
    readonly cache?: ImmutableCache,
    /** Sees every call's outcome (metrics). */
    private readonly observe?: (method: string, outcome: RpcOutcome) => void,
  ) {
    // Answered without a round trip: they never change for a network.
    this.local = new Map<string, JsonValue>([
      ["eth_chainId", "0x" + chainId.toString(16)],
      ["net_version", String(chainId)],
    ]);
  }

  /** Registers a gateway-implemented method (platform_*). */
  register(method: string, fn: CustomMethod): void {
    this.custom.set(method, fn);
  }

  async call(ctx: CallContext, method: string, params: Params): Promise<JsonValue> {
    const [outcome] = await this.callMany(ctx, [{ method, params }]);
    if (!outcome) throw new GatewayError("internal", "no outcome");
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  async callMany(ctx: CallContext, calls: CoreCall[]): Promise<RpcOutcome[]> {
    const outcomes: (RpcOutcome | Promise<RpcOutcome> | undefined)[] = new Array(calls.length);
    const proxied: { index: number; call: RpcCall }[] = [];
    await Promise.all(
      calls.map(async (call, index) => {
        try {
          const custom = this.custom.get(call.method);
          checkMethodAllowed(call.method, ctx.access, custom !== undefined);
          if (!Array.isArray(call.params)) {
            throw new GatewayError("invalid_params", `Invalid params: ${call.method} takes positional params (a JSON array)`);
          }
          if (WRITE_METHODS.has(call.method)) await this.beforeWrite(ctx);
          const local = this.local.get(call.method) ?? this.cache?.get(call.method, call.params);
          if (local !== undefined) outcomes[index] = { ok: true, result: local };
          else if (custom) outcomes[index] = settle(custom(ctx, call.params));
          else proxied.push({ index, call: { method: call.method, params: call.params } });
        } catch (err) {
          outcomes[index] = { ok: false, error: toGatewayError(err) };
        }
      }),
    );
    // One upstream round trip for everything proxied, in request order.
    proxied.sort((a, b) => a.index - b.index);
    if (proxied.length > 0) {
      try {
        const results = await this.pool.callMany(proxied.map((p) => p.call));
        results.forEach((r, i) => {
          const { call, index } = proxied[i]!;
          outcomes[index] = r;
          if (r.ok && this.cache) {
            if (call.method === "eth_blockNumber") this.cache.observeHead(r.result);
            this.cache.put(call.method, call.params, r.result);
          }
        });
      } catch (err) {
        for (const p of proxied) outcomes[p.index] = { ok: false, error: toGatewayError(err) };
      }
    }
    const settled = await Promise.all(outcomes.map((o) => o ?? { ok: false as const, error: new GatewayError("internal", "call was not dispatched") }));
    if (this.observe) settled.forEach((o, i) => this.observe!(calls[i]!.method, o));
    return settled;
  }
}

function settle(p: Promise<JsonValue>): Promise<RpcOutcome> {
  return p.then(
    (result) => ({ ok: true as const, result }),
    (err: unknown) => ({ ok: false as const, error: toGatewayError(err) }),
  );
}
