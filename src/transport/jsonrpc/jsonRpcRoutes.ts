// JSON-RPC 2.0 over HTTP: POST / (public, read-only) and POST /zgt/<API_KEY> (the key's rights), plus the
// experimental POST /zgt/<API_KEY>/sponsor-consent. Translation only: the envelope is handleJsonRpc's, the
// policy (who, limits, idempotency) is Policy's under RpcService.Call/Batch — the entries Connect's Call and
// Batch run under — and the calls are RpcCore's, as behind those handlers. JSON-RPC does not go through the
// Call/Batch message handlers themselves: turning every param and result into google.protobuf.Value and
// back would cost the hot path its speed (`npm run bench:via-handler`), for the same core call.
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GatewayError } from "../../errors.js";
import type { RpcDispatcher } from "../../rpc/rpcCore.js";
import type { HttpAnswer, RestRequest, RestRoute } from "../http/restRouter.js";
import { json } from "../http/restRouter.js";
import { handleJsonRpc, type JsonRpcHttpAnswer, type JsonRpcOptions } from "./handleJsonRpc.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import type { Caller, Policy } from "../../policy/policy.js";
import { RpcService, SignSponsorConsentRequestSchema } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { callInProcess } from "../http/callInProcess.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";
import type { MaybePromise } from "../../maybePromise.js";

export interface JsonRpcRouteOptions {
  dispatcher: RpcDispatcher;
  maxBatchSize: number;
  policy: Policy;
  /** The guarded RpcService handlers (sponsor consent is one). */
  rpc: ServiceImpl<typeof RpcService>;
}

function renderError(err: GatewayError): HttpAnswer {
  const status = err.kind === "parse_error" || err.kind === "invalid_request" ? 400 : httpStatusForJsonRpc(err);
  const headers = err.retryAfterSeconds !== undefined ? { "retry-after": String(err.retryAfterSeconds) } : undefined;
  return {
    status,
    body: JSON.stringify({ jsonrpc: "2.0", id: null, error: toJsonRpcError(err) }),
    contentType: "application/json",
    ...(headers ? { headers } : {}),
  };
}

/** A kept JSON-RPC answer (for idempotent replays) is the answer itself. */
const answerCodec = {
  encode: (a: JsonRpcHttpAnswer) => JSON.stringify(a),
  decode: (t: string) => JSON.parse(t) as JsonRpcHttpAnswer,
};

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function jsonRpcRoutes(options: JsonRpcRouteOptions): RestRoute[] {
  const { policy } = options;
  // The JSON-RPC answer is the HTTP answer (the router's default content type is JSON's); no promise when the
  // body is already read and nothing waits.
  const serve = (req: RestRequest, caller: Caller): MaybePromise<HttpAnswer> => {
    const rpcOptions: JsonRpcOptions = {
      maxBatchSize: options.maxBatchSize,
      admit: (weight, batch) => policy.admit(batch ? "RpcService.Batch" : "RpcService.Call", caller, weight),
      ...(caller.idempotencyKey === undefined
        ? {}
        : {
            around: async (batch: boolean, admitted, run) => {
              const outcome = await policy
                .run(batch ? "RpcService.Batch" : "RpcService.Call", admitted, caller, () => req.text ?? "", answerCodec, run)
                .catch((err: unknown) => {
                  // A kept error replayed: answered as JSON-RPC by handleJsonRpc, marked as a replay here.
                  if (err instanceof GatewayError && err.replayed) admitted.headers = { ...admitted.headers, "idempotent-replayed": "true" };
                  throw err;
                });
              return outcome.replayed ? { ...outcome.value, headers: { ...outcome.value.headers, "idempotent-replayed": "true" } } : outcome.value;
            },
          }),
    };
    const run = (text: string): MaybePromise<HttpAnswer> => handleJsonRpc(text, options.dispatcher, rpcOptions);
    return req.text !== undefined ? run(req.text) : req.body().then(run);
  };
  return [
    { method: "POST", pattern: /^\/$/, renderError, handle: (req) => serve(req, { clientIp: req.clientIp }) },
    // /zgt and /zgt/ without a key are the public endpoint, as / is (Stability's keyless clients call them).
    { method: "POST", pattern: /^\/zgt\/?$/, renderError, handle: (req) => serve(req, { clientIp: req.clientIp }) },
    {
      // A trailing slash after the key is the same keyed endpoint.
      method: "POST",
      pattern: /^\/zgt\/([^/]+)\/?$/,
      renderError,
      async handle(req) {
        const text = req.text ?? (await req.body());
        return serve(
          { ...req, text },
          { apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp, idempotencyKey: headerValue(req.headers["idempotency-key"]) },
        );
      },
    },
    {
      // Experimental: the key's wallet signs the sponsor consent for a raw transaction.
      method: "POST",
      pattern: /^\/zgt\/([^/]+)\/sponsor-consent$/,
      renderError: (err) => zktErrorAnswer(err),
      async handle(req) {
        let body: unknown;
        try {
          body = JSON.parse(await req.body());
        } catch (err) {
          if (err instanceof GatewayError) throw err;
          throw new GatewayError("validation", 'the body must be JSON: {"rawTransaction": "0x…"}');
        }
        const raw = (body as { rawTransaction?: unknown } | null)?.rawTransaction;
        if (typeof raw !== "string") throw new GatewayError("validation", 'rawTransaction is required: {"rawTransaction": "0x…"}');
        const caller = { apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp };
        const call = callInProcess(
          RpcService.method.signSponsorConsent,
          options.rpc.signSponsorConsent,
          create(SignSponsorConsentRequestSchema, { rawTransaction: raw }),
          caller,
          req.path,
        );
        const { $typeName: _, ...fields } = await call.result;
        return json(200, { success: true, ...fields }, call.headers());
      },
    },
  ];
}
