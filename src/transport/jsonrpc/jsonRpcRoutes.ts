// JSON-RPC 2.0 over HTTP: POST / (public, read-only) and POST /zgt/<API_KEY> (the key's rights), plus the
// experimental POST /zgt/<API_KEY>/sponsor-consent. Translation only: the envelope is handleJsonRpc's, and
// every call runs through the guarded RpcService handlers in process (Call, Batch, SignSponsorConsent), which
// apply the policy — who, limits, idempotency — as they do for Connect, gRPC and gRPC-Web.
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GatewayError } from "../../errors.js";
import type { HttpAnswer, RestRequest, RestRoute } from "../http/restRouter.js";
import { json } from "../http/restRouter.js";
import { handleJsonRpc } from "./handleJsonRpc.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import type { Caller } from "../../policy/policy.js";
import { RpcService, SignSponsorConsentRequestSchema } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { callInProcess } from "../http/callInProcess.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";
import type { MaybePromise } from "../../maybePromise.js";
import { jsonRpcViaHandlers } from "./viaHandlers.js";

export interface JsonRpcRouteOptions {
  maxBatchSize: number;
  /** The guarded RpcService handlers. */
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

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function jsonRpcRoutes(options: JsonRpcRouteOptions): RestRoute[] {
  // The JSON-RPC answer is the HTTP answer (the router's default content type is JSON's).
  // `route` names the endpoint in the handler's context, never the path itself (it may hold the key).
  const serve = (req: RestRequest, caller: Caller, route: string): MaybePromise<HttpAnswer> => {
    const handlers = jsonRpcViaHandlers(options.rpc, caller, route);
    const run = (text: string): MaybePromise<HttpAnswer> => handleJsonRpc(text, handlers, options.maxBatchSize);
    return req.text !== undefined ? run(req.text) : req.body().then(run);
  };
  return [
    { method: "POST", pattern: /^\/$/, renderError, handle: (req) => serve(req, { clientIp: req.clientIp }, "/") },
    // /zgt and /zgt/ without a key are the public endpoint, as / is (Stability's keyless clients call them).
    { method: "POST", pattern: /^\/zgt\/?$/, renderError, handle: (req) => serve(req, { clientIp: req.clientIp }, "/zgt") },
    {
      // A trailing slash after the key is the same keyed endpoint.
      method: "POST",
      pattern: /^\/zgt\/([^/]+)\/?$/,
      renderError,
      handle: (req) =>
        serve(
          req,
          { apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp, idempotencyKey: headerValue(req.headers["idempotency-key"]) },
          "/zgt/{key}",
        ),
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
          "/zgt/{key}/sponsor-consent",
        );
        const { $typeName: _, ...fields } = await call.result;
        return json(200, { success: true, ...fields }, call.headers());
      },
    },
  ];
}
