// JSON-RPC's way onto the RpcService handlers: a call becomes RpcService.Call, several become
// RpcService.Batch, run in process with the caller in the context (callInProcess), so the guard applies the
// policy as it does for Connect. Params and results travel as JSON text (params_json, result_json): the
// node's answer is passed through, never parsed into google.protobuf.Value and back.
import { create, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type BatchItemSchema,
  type BatchResponseSchema,
  type CallResponseSchema,
  BatchRequestSchema,
  RpcErrorSchema,
  RpcService,
  type BatchRequest,
  type CallRequest,
} from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { toGatewayError, type JsonValue } from "../../errors.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import type { CoreCall, Params } from "../../rpc/rpcCore.js";
import { runInProcess } from "../http/callInProcess.js";
import { PARSED_PARAMS, type CallRequestWithParsedParams } from "../../handlers/context.js";
import { attempt, type MaybePromise } from "../../maybePromise.js";
import type { Handled, ItemOutcome, JsonRpcHandlers } from "./handleJsonRpc.js";

/**
 * A CallRequest (protobuf-es messages are plain objects: no create() per call) carrying
 * the params as the envelope parsed them; their params_json text is made only if read. A class, so every
 * request shares one shape and the getter.
 */
class ParsedCallRequest implements CallRequestWithParsedParams {
  readonly $typeName = "chaingateway.rpc.v1.CallRequest" as const;
  readonly params = undefined;
  readonly [PARSED_PARAMS]: Params;
  private text: string | undefined = undefined;
  constructor(
    readonly method: string,
    params: Params,
  ) {
    this[PARSED_PARAMS] = params;
  }
  get paramsJson(): string {
    return (this.text ??= JSON.stringify(this[PARSED_PARAMS]));
  }
}

function callRequest(call: CoreCall): CallRequest {
  return new ParsedCallRequest(call.method, call.params);
}

function itemOutcome(item: MessageInitShape<typeof BatchItemSchema>): ItemOutcome {
  if (!item.error) return { ok: true, json: item.resultJson ?? "" };
  const { code = 0, message = "", data } = create(RpcErrorSchema, item.error);
  return { ok: false, error: data === undefined ? { code, message } : { code, message, data: toJson(ValueSchema, data) as JsonValue } };
}

type InProcessRun<A> = { answer: MaybePromise<A>; headers(): Record<string, string> };

/** A handler's answer or failure, with the headers it set; at once (no closure, no promise) when it answered at once. */
function settle<A, U>(run: InProcessRun<A>, ok: (r: A) => U): MaybePromise<Handled<U>> {
  if (!(run.answer instanceof Promise)) return { outcome: { ok: true, value: ok(run.answer) }, headers: run.headers() };
  return run.answer.then(
    (r): Handled<U> => ({ outcome: { ok: true, value: ok(r) }, headers: run.headers() }),
    (err: unknown): Handled<U> => ({ outcome: { ok: false, error: toGatewayError(err) }, headers: run.headers() }),
  );
}

const resultJsonOf = (r: MessageInitShape<typeof CallResponseSchema>): string => r.resultJson ?? "";
const itemsOf = (r: MessageInitShape<typeof BatchResponseSchema>): ItemOutcome[] => (r.items ?? []).map(itemOutcome);

/** A malformed request's admission (it reaches no handler) as the envelope takes it: its headers, or its refusal. */
function admitted(admission: EdgeAdmission, caller: Caller, weight: number): MaybePromise<Handled<void>> {
  return attempt(
    () => admission.refused(caller, weight),
    (a): Handled<void> => ({ outcome: { ok: true, value: undefined }, headers: a.headers }),
    (err): Handled<void> => ({ outcome: { ok: false, error: toGatewayError(err) }, headers: {} }),
  );
}

/** The RpcService handlers (guarded) as the JSON-RPC envelope calls them, for one caller. */
export function jsonRpcViaHandlers(rpc: ServiceImpl<typeof RpcService>, caller: Caller, path: string, admission: EdgeAdmission): JsonRpcHandlers {
  return new ViaHandlers(rpc, caller, path, admission);
}

/** (A class: one object per request, its methods shared, where an object literal made three closures.) */
class ViaHandlers implements JsonRpcHandlers {
  constructor(
    private readonly rpc: ServiceImpl<typeof RpcService>,
    private readonly caller: Caller,
    private readonly path: string,
    private readonly admission: EdgeAdmission,
  ) {}

  malformed(weight: number): MaybePromise<Handled<void>> {
    return admitted(this.admission, this.caller, weight);
  }

  call(call: CoreCall): MaybePromise<Handled<string>> {
    return settle(runInProcess(RpcService.method.call, this.rpc.call, callRequest(call), this.caller, this.path), resultJsonOf);
  }

  batch(calls: CoreCall[]): MaybePromise<Handled<ItemOutcome[]>> {
    const req: BatchRequest = { $typeName: BatchRequestSchema.typeName, calls: calls.map(callRequest) };
    return settle(runInProcess(RpcService.method.batch, this.rpc.batch, req, this.caller, this.path), itemsOf);
  }
}
