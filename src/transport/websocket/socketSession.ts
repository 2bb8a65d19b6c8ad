// One socket's JSON-RPC side: who it is, where its socket is held, the subscriptions it holds there, and the
// handlers its messages run on: the guarded RpcService ones (as over HTTP), with eth_subscribe and
// eth_unsubscribe answered here (admitted as calls), since a subscription belongs to its socket.
import type { ServiceImpl } from "@connectrpc/connect";
import type { Context } from "@opentelemetry/api";
import type { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { RpcOutcome } from "../../chain/upstreamReplies.js";
import { GatewayError, type JsonValue, toGatewayError } from "../../errors.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import { parseLogFilter } from "../../live/parseLogFilter.js";
import { newSubscriptionId, type SubscriptionKind } from "../../live/subscriptions.js";
import type { CallContext, CoreCall } from "../../rpc/rpcCore.js";
import type { Handled, ItemOutcome, JsonRpcHandlers } from "../jsonrpc/handleJsonRpc.js";
import { toJsonRpcError } from "../jsonrpc/errorMap.js";
import { jsonRpcViaHandlers } from "../jsonrpc/viaHandlers.js";
import type { SocketBudgets } from "./socketBudgets.js";
import type { SocketHost } from "./socketHost.js";

export interface Session {
  sid: number;
  host: SocketHost;
  caller: Caller;
  who: string;
  /** The client's IP, when its sockets and subscriptions count against the per-IP budget (else undefined). */
  ip: string | undefined;
  /** The upgrade request's trace context (tracing on). */
  trace?: Context;
  opened: boolean;
  subscriptions: Set<string>;
  /** Subscriptions started by the message being answered: their notifications wait for that answer. */
  released: string[];
}

export interface SessionDeps {
  rpc: ServiceImpl<typeof RpcService>;
  admission: EdgeAdmission;
  budgets: SocketBudgets;
  maxSubscriptionsPerSocket: number;
}

const KINDS: ReadonlySet<string> = new Set<SubscriptionKind>(["newHeads", "logs", "newPendingTransactions"]);
const isSubscriptionCall = (c: CoreCall): boolean => c.method === "eth_subscribe" || c.method === "eth_unsubscribe";
const item = (o: RpcOutcome): ItemOutcome => (o.ok ? { ok: true, json: JSON.stringify(o.result) } : { ok: false, error: toJsonRpcError(o.error) });

function subscribe(s: Session, deps: SessionDeps, ctx: CallContext, params: JsonValue[]): string {
  const kind = params[0];
  if (typeof kind !== "string" || !KINDS.has(kind)) {
    throw new GatewayError("invalid_params", `Invalid params: unsupported subscription type ${JSON.stringify(kind)} (newHeads, logs, newPendingTransactions)`);
  }
  if (kind === "newPendingTransactions" && ctx.access.kind === "public") {
    throw new GatewayError("key_required", "newPendingTransactions needs an API key: subscribe on /zgt/<API_KEY>");
  }
  if (kind !== "logs" && params.length > 1 && params[1] !== null && kind !== "newHeads")
    throw new GatewayError("invalid_params", `Invalid params: ${kind} takes no filter`);
  const filter = kind === "logs" ? parseLogFilter(params[1]) : {};
  if (s.subscriptions.size >= deps.maxSubscriptionsPerSocket) {
    throw new GatewayError("rate_limited", `limit exceeded: at most ${deps.maxSubscriptionsPerSocket} subscriptions per socket`);
  }
  deps.budgets.subscribe(s.ip);
  const id = newSubscriptionId();
  s.subscriptions.add(id);
  s.released.push(id);
  s.host.subscribe(s.sid, id, kind as SubscriptionKind, filter);
  return id;
}

/** eth_subscribe/eth_unsubscribe, answered for the socket. */
function answerHere(s: Session, deps: SessionDeps, ctx: CallContext, call: CoreCall): RpcOutcome {
  try {
    const params = Array.isArray(call.params) ? (call.params as JsonValue[]) : [];
    if (call.method === "eth_subscribe") return { ok: true, result: subscribe(s, deps, ctx, params) };
    const id = params[0];
    if (typeof id !== "string" || params.length !== 1) throw new GatewayError("invalid_params", "Invalid params: eth_unsubscribe takes one subscription id");
    const mine = s.subscriptions.delete(id);
    if (mine) {
      s.host.unsubscribe(s.sid, id);
      deps.budgets.unsubscribed(s.ip);
    }
    return { ok: true, result: mine };
  } catch (err) {
    return { ok: false, error: toGatewayError(err) };
  }
}

/** eth_subscribe/eth_unsubscribe calls: admitted as calls, answered for this socket. */
async function subscriptionCalls(s: Session, deps: SessionDeps, calls: CoreCall[]): Promise<Handled<RpcOutcome[]>> {
  try {
    const admission = await deps.admission.calls(s.caller, calls.length);
    return { outcome: { ok: true, value: calls.map((c) => answerHere(s, deps, { access: admission.access }, c)) }, headers: admission.headers };
  } catch (err) {
    return { outcome: { ok: false, error: toGatewayError(err) }, headers: {} };
  }
}

/** The JSON-RPC handlers of one socket's message (made per message, so an idle subscriber holds none). */
export function sessionHandlers(s: Session, deps: SessionDeps): JsonRpcHandlers {
  const viaRpc = jsonRpcViaHandlers(deps.rpc, s.caller, s.caller.apiKey === undefined ? "/" : "/zgt/{key}", deps.admission);
  return {
    malformed: (weight) => viaRpc.malformed(weight),
    async call(call) {
      if (!isSubscriptionCall(call)) return viaRpc.call(call);
      const { outcome, headers } = await subscriptionCalls(s, deps, [call]);
      if (!outcome.ok) return { outcome, headers };
      const o = outcome.value[0]!;
      return { outcome: o.ok ? { ok: true, value: JSON.stringify(o.result) } : o, headers };
    },
    async batch(calls) {
      if (!calls.some(isSubscriptionCall)) return viaRpc.batch(calls);
      const others = calls.filter((c) => !isSubscriptionCall(c));
      const [mine, theirs] = await Promise.all([
        subscriptionCalls(s, deps, calls.filter(isSubscriptionCall)),
        others.length > 0 ? viaRpc.batch(others) : { outcome: { ok: true as const, value: [] as ItemOutcome[] }, headers: {} },
      ]);
      if (!mine.outcome.ok) return { outcome: mine.outcome, headers: mine.headers };
      if (!theirs.outcome.ok) return theirs;
      const own = mine.outcome.value;
      const rest = theirs.outcome.value;
      let i = 0;
      let j = 0;
      return { outcome: { ok: true, value: calls.map((c) => (isSubscriptionCall(c) ? item(own[i++]!) : rest[j++]!)) }, headers: theirs.headers };
    },
  };
}
