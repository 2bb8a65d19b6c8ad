// Puts every method of a service implementation under Policy, by its entry in OPERATIONS: the one place
// authentication, limits, quota and idempotency are applied, for Connect, gRPC, gRPC-Web and the REST
// adapters alike (they call these guarded methods in process).
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create, fromJsonString, toJsonString, type DescMessage, type DescMethodUnary, type DescService, type MessageShape } from "@bufbuild/protobuf";
import { GatewayError } from "../errors.js";
import type { Admission, Caller, Policy } from "../policy/policy.js";
import { andThen, type MaybePromise } from "../maybePromise.js";
import { OPERATIONS, operationOf, type OperationName } from "../policy/operations.js";
import { accessKey, adminKey, callerKey, claimHooksKey, prepaidKey, transportOf } from "./context.js";
import { inSpan, SpanKind, tracingOn } from "../trace/tracing.js";

type Unary = (req: MessageShape<DescMessage>, ctx: HandlerContext) => MaybePromise<unknown>;
type Streaming = (req: MessageShape<DescMessage>, ctx: HandlerContext) => AsyncIterable<unknown>;

export function guard<S extends DescService>(
  service: S,
  impl: ServiceImpl<S>,
  policy: Policy,
  weightOf: (method: string, req: unknown) => number = () => 1,
): ServiceImpl<S> {
  const guarded: Record<string, Unary | Streaming> = {};
  for (const method of service.methods) {
    const op = operationOf(method);
    if (op === undefined) throw new Error(`${service.typeName}.${method.name} has no entry in OPERATIONS`);
    if (method.methodKind === "server_streaming") {
      // A stream is admitted once, when it opens (the key checked, one request counted); never idempotent.
      const stream = (impl as unknown as Record<string, Streaming>)[method.localName]!;
      guarded[method.localName] = async function* (req, ctx) {
        if (!ctx.values.get(prepaidKey)) admitted(ctx, await policy.admit(op, ctx.values.get(callerKey), 1));
        yield* stream(req, ctx);
      };
      continue;
    }
    if (method.methodKind !== "unary") throw new Error(`${service.typeName}.${method.name}: only unary and server-streaming methods are guarded`);
    const m = method as DescMethodUnary;
    const fn = (impl as unknown as Record<string, Unary>)[method.localName]!;
    const codec = {
      encode: (v: unknown) => toJsonString(m.output, create(m.output, v as never)),
      decode: (t: string) => fromJsonString(m.output, t),
    };
    // At once when nothing waits (a public caller, a local limiter, a locally answered call): no promise.
    guarded[method.localName] = (req, ctx) => {
      const caller = ctx.values.get(callerKey);
      const weight = weightOf(method.name, req);
      // Admitted at the gate (Connect, gRPC, gRPC-Web): one request is paid; a batch pays for the rest of its calls.
      const prepaid = ctx.values.get(prepaidKey);
      // (No closure unless traced: this runs for every call.)
      const decided = tracingOn
        ? inSpan(`policy ${op}`, SpanKind.INTERNAL, () => admit(policy, op, caller, weight, prepaid))
        : admit(policy, op, caller, weight, prepaid);
      return andThen(decided, (admission) => {
        admitted(ctx, admission);
        // A write request may carry its own idempotency key (the ZKT messages' idempotency_key field).
        const own = (req as { idempotencyKey?: unknown }).idempotencyKey;
        const withKey = typeof own === "string" && own !== "" ? { ...caller, idempotencyKey: own } : caller;
        if (!policy.hasRunWork(op, withKey)) return fn(req, ctx);
        if (!OPERATIONS[op].idempotent || !withKey.idempotencyKey)
          return policy
            .run(
              op,
              admission,
              withKey,
              () => "",
              codec,
              () => fn(req, ctx),
            )
            .then((r) => r.value);
        return idempotent(req, ctx, admission, withKey);
      });
    };
    const idempotent = async (req: MessageShape<DescMessage>, ctx: HandlerContext, admission: Admission, withKey: Caller): Promise<unknown> => {
      const payload = () => toJsonString(m.input, ("idempotencyKey" in req ? { ...req, idempotencyKey: "" } : req) as never);
      const outcome = await policy
        .run(op, admission, withKey, payload, codec, (hooks) => {
          ctx.values.set(claimHooksKey, hooks);
          return fn(req, ctx);
        })
        .catch((err: unknown) => {
          if (err instanceof GatewayError && err.replayed) ctx.responseHeader.set("idempotent-replayed", "true");
          throw err;
        });
      if (outcome.replayed) ctx.responseHeader.set("idempotent-replayed", "true");
      return outcome.value;
    };
    // Traced, the whole operation (its policy span and the handler's work within) is one span, named with
    // OpenTelemetry's RPC attributes: a JSON-RPC call by its own method, anything else by the contract's.
    const run = guarded[method.localName] as Unary;
    const attributes = { "rpc.system": "connect_rpc", "rpc.service": service.typeName, "rpc.method": method.name, "gateway.network": policy.network };
    guarded[method.localName] = function traced(req, ctx) {
      if (!tracingOn) return run(req, ctx);
      const jsonRpc = op === "RpcService.Call" ? (req as { method?: unknown }).method : undefined;
      const named = typeof jsonRpc === "string" ? { ...attributes, "rpc.system": "jsonrpc", "rpc.method": jsonRpc } : attributes;
      return inSpan(op, SpanKind.INTERNAL, () => run(req, ctx), undefined, { ...named, "gateway.transport": transportOf(ctx) });
    };
  }
  return guarded as unknown as ServiceImpl<S>;
}

/** The admission of `weight` requests: at the gate already (one paid; a batch pays the rest) or now. */
function admit(policy: Policy, op: OperationName, caller: Caller, weight: number, prepaid: Admission | undefined): MaybePromise<Admission> {
  if (prepaid === undefined) return policy.admit(op, caller, weight);
  return weight > 1 ? policy.admitMore(prepaid, caller, weight - 1) : prepaid;
}

/** What the policy decided, where the handler reads it (access) and the answer carries it (X-RateLimit-*). */
function admitted(ctx: HandlerContext, admission: Admission): void {
  ctx.values.set(accessKey, admission.access);
  if (admission.admin !== undefined) ctx.values.set(adminKey, admission.admin);
  for (const k in admission.headers) ctx.responseHeader.set(k, admission.headers[k]!);
}

/**
 * Connect's request gate: admits one request of the method's operation (more for a large declared body, as
 * the edge weighs it) before its body is read or parsed, so
 * a body that fails to parse still counts against the caller's limits, and a refused caller's body is never
 * read. The guarded method then charges only what the parsed request weighs beyond that one.
 */
export function admissionGate(policy: Policy): (ctx: HandlerContext, weight?: number) => MaybePromise<void> {
  return (ctx, weight = 1) => {
    const op = operationOf(ctx.method);
    if (op === undefined) return;
    return andThen(policy.admit(op, ctx.values.get(callerKey), weight), (admission) => {
      ctx.values.set(prepaidKey, admission);
      admitted(ctx, admission);
    });
  };
}

/**
 * Admission of one message of a stream the guard cannot wrap (gRPC reflection's bidirectional stream): the
 * caller from the context, under `op`'s entry; throws when refused, which ends the stream with the error.
 */
export function admitEach(policy: Policy, op: OperationName): (ctx: HandlerContext) => MaybePromise<Admission> {
  return (ctx) => {
    // The first message was paid for at the gate, when the stream opened.
    const prepaid = ctx.values.get(prepaidKey);
    if (prepaid === undefined) return policy.admit(op, ctx.values.get(callerKey));
    ctx.values.set(prepaidKey, undefined);
    return prepaid;
  };
}
