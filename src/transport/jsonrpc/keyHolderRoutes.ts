// A key holder's own REST routes beside its JSON-RPC endpoint, answered ZKT-style ({"success": true, ...};
// errors as ZKT bodies): POST /zgt/<key>/sponsor-consent (experimental: the key's wallet signs a sponsor
// consent), POST /zgt/<key>/faucet (test funds on embedded dev chains), GET /zgt/<key>/usage (GetUsage as
// plain JSON numbers). Translation only: each is an RpcService method called in process, under the guard.
import { create, type DescMessage, type DescMethodUnary, type MessageShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  GetUsageRequestSchema,
  type GetUsageResponse,
  RequestTestFundsRequestSchema,
  RpcService,
  SignSponsorConsentRequestSchema,
} from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { GatewayError } from "../../errors.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import type { MaybePromise } from "../../maybePromise.js";
import { callInProcess } from "../http/callInProcess.js";
import { json, type RestRoute } from "../http/restRouter.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";

export interface KeyHolderRouteOptions {
  /** The guarded RpcService handlers. */
  rpc: ServiceImpl<typeof RpcService>;
  /** The edge's admission: a body too malformed to reach a handler still counts. */
  admission: EdgeAdmission;
}

export function keyHolderRoutes(options: KeyHolderRouteOptions): RestRoute[] {
  return [
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
      // A body too malformed to reach the handler still counts against the caller's limits.
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
