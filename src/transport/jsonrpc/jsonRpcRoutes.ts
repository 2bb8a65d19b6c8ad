// JSON-RPC 2.0 over HTTP: POST / (public, read-only) and POST /zgt/<API_KEY> (the key's rights).
import { GatewayError } from "../../errors.js";
import type { Access } from "../../rpc/methodPolicy.js";
import type { RpcDispatcher } from "../../rpc/rpcCore.js";
import type { HttpAnswer, RestRequest, RestRoute } from "../http/restRouter.js";
import { handleJsonRpc } from "./handleJsonRpc.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import type { IdempotencyStore } from "../../store/idempotencyStore.js";
import { withIdempotency } from "../http/withIdempotency.js";
import type { Sponsorship } from "../../platform/sponsorship.js";
import { json } from "../http/restRouter.js";
import { zktErrorAnswer } from "../zkt/errorMap.js";
import type { MaybePromise } from "../../maybePromise.js";

/** Resolves an API key to access rights; throws an unauthorized GatewayError for unknown or revoked keys. */
export type Authenticate = (apiKey: string) => Promise<Access>;

export interface JsonRpcRouteOptions {
  dispatcher: RpcDispatcher;
  maxBatchSize: number;
  authenticate: Authenticate;
  idempotency: IdempotencyStore;
  network: string;
  sponsorship: Sponsorship;
  /** Rate-limit admission for a caller; returns X-RateLimit-* headers (at once when decided locally). */
  admit: (access: Access, clientIp: string, weight: number) => MaybePromise<Record<string, string>>;
}

const PUBLIC: Access = { kind: "public" };

function renderError(err: GatewayError): HttpAnswer {
  const status = err.kind === "parse_error" || err.kind === "invalid_request" ? 400 : httpStatusForJsonRpc(err);
  const headers = err.retryAfterSeconds !== undefined ? { "retry-after": String(err.retryAfterSeconds) } : undefined;
  return { status, body: JSON.stringify({ jsonrpc: "2.0", id: null, error: toJsonRpcError(err) }), contentType: "application/json", ...(headers ? { headers } : {}) };
}

export function jsonRpcRoutes(options: JsonRpcRouteOptions): RestRoute[] {
  // The JSON-RPC answer is the HTTP answer (the router's default content type is JSON's); no promise when the
  // body is already read and nothing waits.
  const serve = (req: RestRequest, access: Access): MaybePromise<HttpAnswer> => {
    const run = (text: string): MaybePromise<HttpAnswer> =>
      handleJsonRpc(text, { access }, options.dispatcher, { maxBatchSize: options.maxBatchSize, admit: (weight) => options.admit(access, req.clientIp, weight) });
    return req.text !== undefined ? run(req.text) : req.body().then(run);
  };
  return [
    { method: "POST", pattern: /^\/$/, renderError, handle: (req) => serve(req, PUBLIC) },
    {
      method: "POST",
      pattern: /^\/zgt\/([^/]+)$/,
      renderError,
      async handle(req) {
        const access = await options.authenticate(decodeURIComponent(req.params[0] ?? ""));
        const scope = `zgt:${options.network}:${access.kind === "key" ? access.keyId : "public"}`;
        return withIdempotency(options.idempotency, scope, req, async () => serve(req, access));
      },
    },
    {
      // Experimental: the key's wallet signs the sponsor consent for a raw transaction.
      method: "POST",
      pattern: /^\/zgt\/([^/]+)\/sponsor-consent$/,
      renderError: (err) => zktErrorAnswer(err),
      async handle(req) {
        const access = await options.authenticate(decodeURIComponent(req.params[0] ?? ""));
        let body: unknown;
        try {
          body = JSON.parse(await req.body());
        } catch (err) {
          if (err instanceof GatewayError) throw err;
          throw new GatewayError("validation", 'the body must be JSON: {"rawTransaction": "0x…"}');
        }
        const raw = (body as { rawTransaction?: unknown } | null)?.rawTransaction;
        if (typeof raw !== "string") throw new GatewayError("validation", 'rawTransaction is required: {"rawTransaction": "0x…"}');
        return json(200, { success: true, ...(await options.sponsorship.signConsent(access, raw)) });
      },
    },
  ];
}
