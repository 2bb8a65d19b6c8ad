// ZKT over REST: POST /zkt/try-it-out (shared signer), POST /zkt/<API_KEY> (the key's wallet),
// GET /zkt/transactions/<queueId>, GET /zkt/openapi.json. Parses, calls ZktCore, renders; decides nothing.
import { GatewayError, toGatewayError } from "../../errors.js";
import type { Access } from "../../rpc/methodPolicy.js";
import type { WriteHooks, ZktCore } from "../../zkt/zktCore.js";
import type { SubmissionRecord } from "../../store/submissionStore.js";
import type { Authenticate } from "../jsonrpc/jsonRpcRoutes.js";
import { json, type HttpAnswer, type RestRequest, type RestRoute } from "../http/restRouter.js";
import { zktErrorAnswer } from "./errorMap.js";
import { idOf, parseZktBody, type ZktId } from "./parseZktBody.js";
import { openApiDocument } from "./openapi.js";
import { docsPage } from "./docsPage.js";
import type { IdempotencyStore } from "../../store/idempotencyStore.js";
import type { Logger } from "../../log/logger.js";
import { withIdempotency } from "../http/withIdempotency.js";

export interface ZktLimits {
  /** Admits one ZKT request (try-it-out has its own stricter limit); returns X-RateLimit-* headers. */
  request(access: Access, clientIp: string, tryItOut: boolean): Promise<Record<string, string>>;
  /** Counts one transaction against the key's daily quota. */
  transaction(access: Access): Promise<void>;
}

export interface ZktRouteOptions {
  core: ZktCore;
  authenticate: Authenticate;
  limits: ZktLimits;
  idempotency: IdempotencyStore;
  /** Names this network in idempotency scopes. */
  network: string;
  log: Logger;
}

const renderError = (err: GatewayError): HttpAnswer => zktErrorAnswer(err);

export function zktRoutes(options: ZktRouteOptions): RestRoute[] {
  const { core } = options;
  const submit = async (req: RestRequest, access: () => Promise<Access>, tryItOut: boolean, hooks: WriteHooks): Promise<HttpAnswer> => {
    let body: unknown;
    try {
      body = JSON.parse(await req.body());
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      return zktErrorAnswer(new GatewayError("validation", "the body is not valid JSON"));
    }
    const id = idOf(body);
    let headers: Record<string, string> = {};
    try {
      const who = await access();
      headers = await options.limits.request(who, req.clientIp, tryItOut);
      const op = parseZktBody(body);
      const quota = () => options.limits.transaction(who);
      switch (op.op) {
        case "message": {
          await quota();
          const r = await core.writeMessage(who, op.message, hooks);
          return ok({ hash: r.hash, transactionHash: r.hash, queueId: r.queueId }, id, headers);
        }
        case "call": {
          const r = await core.callContract(who, op, { ...hooks, wait: op.wait, beforeWrite: quota });
          if (r.kind === "read") return ok({ output: r.output }, id, headers);
          return ok({ hash: r.hash, transactionHash: r.hash, queueId: r.queueId, ...(r.receipt ? { receipt: r.receipt } : {}) }, id, headers);
        }
        case "deploy": {
          await quota();
          const r = await core.deployContract(who, op.code, op.arguments, { ...hooks, ...(op.contractName ? { contractName: op.contractName } : {}), wait: op.wait });
          return ok({ contractAddress: r.contractAddress, abi: r.abi, hash: r.hash, transactionHash: r.hash, queueId: r.queueId }, id, headers);
        }
      }
    } catch (err) {
      const gw = toGatewayError(err);
      if (gw.kind === "internal") options.log.error("ZKT request failed", { requestId: req.requestId, error: String(gw.cause ?? gw) });
      const answer = zktErrorAnswer(gw, id);
      answer.headers = { ...headers, ...answer.headers };
      return answer;
    }
  };
  return [
    { method: "GET", pattern: /^\/zkt\/openapi\.json$/, renderError, handle: async () => json(200, openApiDocument) },
    { method: "GET", pattern: /^\/zkt\/docs\/?$/, renderError, handle: async () => ({ status: 200, body: docsPage(), contentType: "text/html; charset=utf-8" }) },
    {
      method: "GET",
      pattern: /^\/zkt\/transactions\/([^/]+)$/,
      renderError,
      handle: async (req) => json(200, statusBody(await core.transactionStatus(decodeURIComponent(req.params[0]!)))),
    },
    {
      method: "POST",
      pattern: /^\/zkt\/try-it-out$/,
      renderError,
      handle: (req) => withIdempotency(options.idempotency, `zkt:${options.network}:public:${req.clientIp}`, req, (hooks) => submit(req, async () => ({ kind: "public" }), true, hooks)),
    },
    {
      method: "POST",
      pattern: /^\/zkt\/([^/]+)$/,
      renderError,
      async handle(req) {
        const access = await options.authenticate(decodeURIComponent(req.params[0]!)).catch((err: unknown) => err as GatewayError);
        if (access instanceof GatewayError) return zktErrorAnswer(access, await bodyId(req));
        const scope = `zkt:${options.network}:${access.kind === "key" ? access.keyId : "public"}`;
        return withIdempotency(options.idempotency, scope, req, (hooks) => submit(req, async () => access, false, hooks));
      },
    },
  ];
}

/** The request's id, for echoing on errors raised before the body is otherwise read. */
async function bodyId(req: RestRequest): Promise<ZktId | undefined> {
  try {
    return idOf(JSON.parse(await req.body()));
  } catch {
    return undefined;
  }
}

function ok(fields: Record<string, unknown>, id: ZktId | undefined, headers: Record<string, string>): HttpAnswer {
  return json(200, { success: true, ...fields, ...(id !== undefined ? { id } : {}) }, headers);
}

export function statusBody(r: SubmissionRecord): Record<string, unknown> {
  return {
    queueId: r.queueId,
    status: r.status,
    transactionHash: r.hash,
    errorMessage: r.errorMessage ?? null,
    createdAt: r.createdAt.toISOString(),
    processedAt: r.processedAt?.toISOString() ?? null,
  };
}
