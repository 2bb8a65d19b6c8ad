// JSON-RPC 2.0 over HTTP: POST / (public, read-only) and POST /zgt/<API_KEY> (the key's rights), plus the
// experimental POST /zgt/<API_KEY>/sponsor-consent. Translation only: the envelope is handleJsonRpc's, and
// every call runs through the guarded RpcService handlers in process (Call, Batch, SignSponsorConsent), which
// apply the policy — who, limits, idempotency — as they do for Connect, gRPC and gRPC-Web.
import { create, type DescMessage, type DescMethodUnary, type MessageShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GatewayError } from "../../errors.js";
import type { HttpAnswer, RestRequest, RestRoute } from "../http/restRouter.js";
import { costsBeforeAdmission, json, retryAfter } from "../http/restRouter.js";
import { handleJsonRpc } from "./handleJsonRpc.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import {
  GetUsageRequestSchema,
  type GetUsageResponse,
  RequestTestFundsRequestSchema,
  RpcService,
  SignSponsorConsentRequestSchema,
} from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { callInProcess } from "../http/callInProcess.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";
import { andThen, type MaybePromise } from "../../maybePromise.js";
import { jsonRpcViaHandlers } from "./viaHandlers.js";

export interface JsonRpcRouteOptions {
  maxBatchSize: number;
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
    const run = (text: string): MaybePromise<HttpAnswer> => handleJsonRpc(text, handlers, options.maxBatchSize);
    const { text } = req;
    if (text !== undefined && !costsBeforeAdmission(req)) return run(text);
    // A body still to come (node:http, HTTP/2) is not read, nor a large one parsed, for a caller already over
    // its limit.
    const early = options.admission.spent(caller);
    return andThen(early, (refused) => (refused ? renderError(refused) : text !== undefined ? run(text) : req.body().then(run)));
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
    // Experimental: the key's wallet signs the sponsor consent for a raw transaction.
    keyedRoute("sponsor-consent", "rawTransaction", options.admission, (raw) =>
      keyedCall(RpcService.method.signSponsorConsent, options.rpc.signSponsorConsent, create(SignSponsorConsentRequestSchema, { rawTransaction: raw })),
    ),
    // Embedded dev chains: test funds for an address (404 in front of real nodes).
    keyedRoute("faucet", "address", options.admission, (address) =>
      keyedCall(RpcService.method.requestTestFunds, options.rpc.requestTestFunds, create(RequestTestFundsRequestSchema, { address })),
    ),
    // The key's own use, limits and resets (GetUsage), as plain JSON numbers.
    {
      method: "GET",
      pattern: /^\/zgt\/([^/]+)\/usage$/,
      renderError: (err) => zktErrorAnswer(err),
      async handle(req) {
        const caller = { apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp };
        const run = keyedCall(RpcService.method.getUsage, options.rpc.getUsage, create(GetUsageRequestSchema, {}))(caller, "/zgt/{key}/usage");
        const u = (await run.result) as GetUsageResponse;
        const num = (v: bigint | undefined) => Number(v ?? 0n);
        return json(
          200,
          {
            requests: { minute: num(u.requests?.minute), day: num(u.requests?.day), month: num(u.requests?.month) },
            writes: { day: num(u.writes?.day), month: num(u.writes?.month) },
            limits: {
              requestsPerMinute: u.limits?.requestsPerMinute ?? 0,
              writesPerDay: u.limits?.writesPerDay || null,
              writesPerMonth: u.limits?.writesPerMonth || null,
            },
            resets: {
              requestsSeconds: u.resets?.requestsSeconds ?? 0,
              writesDaySeconds: u.resets?.writesDaySeconds ?? 0,
              writesMonthSeconds: u.resets?.writesMonthSeconds ?? 0,
            },
            hourly: u.hourly.map((h) => ({ hour: h.hour, requests: num(h.requests), writes: num(h.writes) })),
          },
          run.headers(),
        );
      },
    },
  ];
}

type KeyedCall = (caller: Caller, route: string) => { result: MaybePromise<object>; headers(): Record<string, string> };

/** An RpcService method called in process for a keyed REST route. */
function keyedCall<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: Parameters<typeof callInProcess<I, O>>[1],
  req: MessageShape<I>,
): KeyedCall {
  return (caller, route) => callInProcess(method, handler, req, caller, route);
}

/**
 * POST /zgt/<key>/<suffix> with a JSON body holding one string field: a keyed RpcService method, answered
 * ZKT-style ({"success": true, ...the answer's fields}; errors as ZKT bodies).
 */
function keyedRoute(suffix: string, field: string, admission: EdgeAdmission, call: (value: string) => KeyedCall): RestRoute {
  const usage = `{"${field}": "0x…"}`;
  return {
    method: "POST",
    pattern: new RegExp(`^/zgt/([^/]+)/${suffix}$`),
    renderError: (err) => zktErrorAnswer(err),
    async handle(req) {
      const caller = { apiKey: decodeURIComponent(req.params[0] ?? ""), clientIp: req.clientIp };
      // A body too malformed to reach the handler still counts against the caller's limits (#54).
      const malformed = async (message: string): Promise<never> => {
        await admission.refused(caller);
        throw new GatewayError("validation", message);
      };
      let body: unknown;
      try {
        body = JSON.parse(await req.body());
      } catch (err) {
        if (err instanceof GatewayError) throw err;
        return malformed(`the body must be JSON: ${usage}`);
      }
      const value = (body as Record<string, unknown> | null)?.[field];
      if (typeof value !== "string") return malformed(`${field} is required: ${usage}`);
      const run = call(value)(caller, `/zgt/{key}/${suffix}`);
      const { $typeName: _, ...fields } = (await run.result) as Record<string, unknown>;
      return json(200, { success: true, ...fields }, run.headers());
    },
  };
}
