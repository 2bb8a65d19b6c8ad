// What a transport hands a handler: who called (set by the transport), and what the policy decided (set by
// the guard) — per call, as Connect context values, so an in-process REST call carries them the same way.
import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Access } from "../keys/access.js";
import type { Admission, Caller } from "../policy/policy.js";
import type { ClaimHooks } from "../store/idempotencyStore.js";
import type { Params } from "../rpc/rpcCore.js";
import type { CallRequest } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";

export const callerKey = createContextKey<Caller>({ clientIp: "unknown" }, { description: "who called, as the transport saw it" });
export const accessKey = createContextKey<Access>({ kind: "public" }, { description: "the caller's access, once admitted" });
/** An admin operation's caller: the name of the admin token it presented (for the audit log). */
export const adminKey = createContextKey<string | undefined>(undefined, { description: "the admin token's name, once admitted" });
/** One request of the call already admitted by the Connect gate (admissionGate), before its body was read. */
export const prepaidKey = createContextKey<Admission | undefined>(undefined, { description: "one request admitted before the body was read" });
/** The transport a call came by, as the request duration histogram labels it. */
export function transportOf(ctx: HandlerContext): string {
  return ctx.values.get(callerKey).transport ?? (ctx.protocolName === "rest" ? "http" : ctx.protocolName);
}
export const claimHooksKey = createContextKey<Partial<ClaimHooks>>({}, { description: "the idempotency claim a write runs under" });

/**
 * Params an in-process caller has already parsed (the JSON-RPC envelope), on the CallRequest it hands the
 * Call or Batch handler: the handler takes them as they are, and the request's params_json text is made only
 * if something reads it (an idempotency payload). Parsing the envelope's params to text and back cost a batch
 * of 40 a fifth of its in-process CPU.
 */
export const PARSED_PARAMS: unique symbol = Symbol("parsedParams");
export type CallRequestWithParsedParams = CallRequest & { [PARSED_PARAMS]?: Params };
