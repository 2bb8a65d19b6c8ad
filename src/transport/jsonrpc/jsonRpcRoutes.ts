// JSON-RPC 2.0 over HTTP: POST / (public, read-only) and POST /zgt/<API_KEY> (the key's rights). Translation
// only: the envelope is handleJsonRpc's, and every call runs through the guarded RpcService handlers in
// process (Call, Batch), which apply the policy — who, limits, idempotency — as they do for Connect, gRPC and
// gRPC-Web. A key holder's other routes (usage, faucet, sponsor consent) are keyHolderRoutes.ts.
import type { ServiceImpl } from "@connectrpc/connect";
import { type GatewayError, toGatewayError } from "../../errors.js";
import type { HttpAnswer, RestRequest, RestRoute } from "../http/restRouter.js";
import { costsBeforeAdmission, retryAfter } from "../http/restRouter.js";
import { handleJsonRpc } from "./handleJsonRpc.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import type { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { andThen, attempt, type MaybePromise } from "../../maybePromise.js";
import { jsonRpcViaHandlers } from "./viaHandlers.js";
import { sizeWeight } from "../http/sizeWeight.js";

export interface JsonRpcRouteOptions {
  maxBatchSize: number;
  /** A body counts one more request per this many bytes past the first (0: not at all). */
  bodyBytesPerRequest: number;
  /** The guarded RpcService handlers. */
  rpc: ServiceImpl<typeof RpcService>;
  /** The edge's admission: requests too malformed to reach a handler still count; a spent caller's body is not read. */
  admission: EdgeAdmission;
}

function renderError(err: GatewayError): HttpAnswer {
  const status = err.kind === "parse_error" || err.kind === "invalid_request" ? 400 : httpStatusForJsonRpc(err);
  const headers = retryAfter(err);
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
    const handlers = jsonRpcViaHandlers(options.rpc, caller, route, options.admission);
    const { text } = req;
    if (text !== undefined && !costsBeforeAdmission(req)) return handleJsonRpc(text, handlers, options.maxBatchSize);
    const run = (text: string): MaybePromise<HttpAnswer> => handleJsonRpc(text, handlers, options.maxBatchSize);
    // A body still to come (node:http, HTTP/2) is not read, nor a large one parsed, for a caller already over
    // its limit.
    const early = options.admission.spent(caller);
    // A large body is charged by its size once read and before it is parsed, so its cost to the loop stays in
    // proportion to the caller's limit (one refused for its size, unread, counts one as before).
    const charged = (bytes: number, then: () => MaybePromise<HttpAnswer>): MaybePromise<HttpAnswer> => {
      const extra = sizeWeight(bytes, options.bodyBytesPerRequest);
      if (extra === 0) return then();
      const over = attempt(
        () => options.admission.calls(caller, extra),
        () => undefined,
        (err) => toGatewayError(err),
      );
      return andThen(over, (err) => (err ? renderError(err) : then()));
    };
    return andThen(early, (refused) => {
      if (refused) return renderError(refused);
      if (text !== undefined) return charged(text.length, () => run(text));
      return req.body().then((read) => charged(read.length, () => run(read)));
    });
  };
  const keyed = (pattern: RegExp, route: string): RestRoute => ({
    method: "POST",
    pattern,
    renderError,
    handle: (req) =>
      serve(
        req,
        { apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp, idempotencyKey: headerValue(req.headers["idempotency-key"]) },
        route,
      ),
  });
  return [
    { method: "POST", pattern: /^\/$/, renderError, handle: (req) => serve(req, { clientIp: req.clientIp }, "/") },
    // /zgt and /zgt/ without a key are the public endpoint, as / is (Stability's keyless clients call them).
    { method: "POST", pattern: /^\/zgt\/?$/, renderError, handle: (req) => serve(req, { clientIp: req.clientIp }, "/zgt") },
    // A trailing slash after the key is the same keyed endpoint.
    keyed(/^\/zgt\/([^/]+)\/?$/, "/zgt/{key}"),
    // Stability's SDK appends the key to the base URL itself (`<base>/<API_KEY>`): a key there is the same keyed
    // endpoint. Any segment shaped like a key (16 to 128 key characters: ours, or one pasted from a hosted
    // service) is taken for one, so a wrong key is told "unknown API key" (401), not "no such endpoint".
    keyed(/^\/([A-Za-z0-9_-]{16,128})\/?$/, "/{key}"),
  ];
}
