// ZKT over REST: POST /zkt/try-it-out (shared signer), POST /zkt/<API_KEY> (the key's wallet),
// GET /zkt/transactions/<queueId>, GET /zkt/openapi.json and /zkt/docs. Translation only: a body becomes the
// ZktService request it asks for, the guarded ZktService handler runs it in process (the same handler, and
// so the same policy, as over Connect), and its response or error becomes the Stability-shaped JSON.
import { create, fromJson, toJson, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { ListValueSchema, type ListValue } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { GatewayError, toGatewayError, type JsonValue } from "../../errors.js";
import {
  ZktService,
  TransactionStatus,
  DeployContractRequestSchema,
  GetTransactionStatusRequestSchema,
  ReadContractRequestSchema,
  WriteContractRequestSchema,
  WriteMessageRequestSchema,
  type Receipt as ReceiptMsg,
} from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { isReadOnlyCall } from "../../zkt/contractAbi.js";
import type { Logger } from "../../log/logger.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import { costsBeforeAdmission, json, type HttpAnswer, type RestRequest, type RestRoute } from "../http/restRouter.js";
import { callInProcess, type InProcessCall } from "../http/callInProcess.js";
import { checkLargeBody, OFF_LOOP_BYTES } from "./bodyCheck.js";
import { zktErrorAnswer } from "./errorMap.js";
import { idOf, parseZktBody, type ZktId, type ZktOperation } from "./parseZktBody.js";
import { openApiDocument } from "./openapi.js";
import { docsPage } from "./docsPage.js";

export interface ZktRouteOptions {
  /** The guarded ZktService handlers. */
  zkt: ServiceImpl<typeof ZktService>;
  log: Logger;
  /**
   * The edge's admission: a spent caller's body is not read, and a submission refused before it reached a
   * handler (too large, not JSON, malformed) counts as a submission (the try-it-out limit too).
   */
  admission: EdgeAdmission;
  /** Told of each body checked off the loop (see bodyCheck.ts), and whether it was refused there. */
  checkedOffLoop?: (refused: boolean) => void;
}

const renderError = (err: GatewayError): HttpAnswer => zktErrorAnswer(err);
/** Plain JSON as the contract's ListValue: the wire form both transports share. */
/** A JSON list as the message field it travels in; nesting past what protobuf decodes (100 levels) is the caller's error. */
const fromJsonList = (v: JsonValue[]): ListValue => {
  try {
    return fromJson(ListValueSchema, v);
  } catch (err) {
    throw new GatewayError("validation", `the request's JSON could not be taken: ${(err as Error).message.replace(/^cannot decode [\w.]+ from JSON: /, "")}`, {
      cause: err,
    });
  }
};
const list = (l: ListValue | undefined): JsonValue[] => (l ? (toJson(ListValueSchema, l) as JsonValue[]) : []);

const statusName: Record<TransactionStatus, string> = {
  [TransactionStatus.UNSPECIFIED]: "pending",
  [TransactionStatus.PENDING]: "pending",
  [TransactionStatus.PROCESSING]: "processing",
  [TransactionStatus.COMPLETED]: "completed",
  [TransactionStatus.ERROR]: "error",
};

function receiptBody(r: ReceiptMsg): Record<string, JsonValue> {
  return {
    status: r.status,
    blockNumber: Number(r.blockNumber),
    blockHash: r.blockHash,
    gasUsed: r.gasUsed,
    contractAddress: r.contractAddress === "" ? null : r.contractAddress,
    logs: r.logs.map((l) => ({
      address: l.address,
      event: l.event === "" ? null : l.event,
      args: (l.args as JsonValue | undefined) ?? null,
      topics: l.topics,
      data: l.data,
      logIndex: l.logIndex,
    })),
  };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function zktRoutes(options: ZktRouteOptions): RestRoute[] {
  const { zkt } = options;
  const submit = async (req: RestRequest, apiKey: string | undefined): Promise<HttpAnswer> => {
    if (costsBeforeAdmission(req)) {
      // A body still to come (node:http, HTTP/2) is not read, nor a large one parsed, for a caller already over
      // its limit.
      const refused = await options.admission.spent({ apiKey, clientIp: req.clientIp }, true);
      if (refused) return zktErrorAnswer(refused);
    }
    const caller: Caller = { apiKey, clientIp: req.clientIp, idempotencyKey: headerValue(req.headers["idempotency-key"]) };
    // A refusal before any handler admitted the request still counts, so refusals cost the caller its limit
    // like requests do.
    let admitted = false;
    const refusedUnadmitted = async (refusal: GatewayError, id?: ZktId): Promise<HttpAnswer> => {
      if (!admitted && refusal.kind !== "client_gone") {
        try {
          await options.admission.refusedWrite(caller);
        } catch (limit) {
          if (limit instanceof GatewayError) return zktErrorAnswer(limit, id);
          throw limit;
        }
      }
      return zktErrorAnswer(refusal, id);
    };
    let body: unknown;
    try {
      const parsed = await parsedBody(req, options.checkedOffLoop);
      if (parsed.refused) return refusedUnadmitted(parsed.refused, parsed.id);
      body = parsed.body;
    } catch (err) {
      if (err instanceof GatewayError && err.kind === "client_gone") throw err;
      return refusedUnadmitted(err instanceof GatewayError ? err : new GatewayError("validation", "the body is not valid JSON"));
    }
    const id = idOf(body);
    let headers: () => Record<string, string> = () => ({});
    const run: Run = (method, handler, message) => {
      admitted = true;
      const call = callInProcess(method, handler, message, caller, req.path);
      headers = call.headers;
      return call;
    };
    try {
      const op = parseZktBody(body);
      const fields = await runOperation(zkt, op, run);
      return ok(fields, id, headers(), op.ignored);
    } catch (err) {
      const gw = toGatewayError(err);
      if (gw.kind === "internal") options.log.error("ZKT request failed", { requestId: req.requestId, error: String(gw.cause ?? gw) });
      if (!admitted) return refusedUnadmitted(gw, id);
      const answer = zktErrorAnswer(gw, id);
      answer.headers = { ...headers(), ...answer.headers };
      return answer;
    }
  };
  return [
    { method: "GET", pattern: /^\/zkt\/openapi\.json$/, renderError, handle: async () => json(200, openApiDocument) },
    {
      method: "GET",
      pattern: /^\/zkt\/docs\/?$/,
      renderError,
      handle: async () => ({ status: 200, body: docsPage(), contentType: "text/html; charset=utf-8" }),
    },
    statusRoute(zkt),
    { method: "POST", pattern: /^\/zkt\/try-it-out$/, renderError, handle: (req) => submit(req, undefined) },
    { method: "POST", pattern: /^\/zkt\/([^/]+)$/, renderError, handle: (req) => submit(req, decodeURIComponent(req.params[0]!)) },
  ];
}

/** The body parsed; a large one is first checked off the loop, and parsed here only if it passes. */
async function parsedBody(
  req: RestRequest,
  checkedOffLoop: ((refused: boolean) => void) | undefined,
): Promise<{ body: unknown; refused?: undefined } | { refused: GatewayError; id?: ZktId | undefined }> {
  if (req.text !== undefined) return { body: JSON.parse(req.text) };
  const bytes = await req.bytes();
  if (bytes.length <= OFF_LOOP_BYTES) return { body: JSON.parse(bytes.toString("utf8")) };
  const checked = await checkLargeBody(bytes);
  checkedOffLoop?.(checked.refused !== undefined);
  // Parsed (strings are copies) or refused, the bytes are no longer read: their memory goes back now, not
  // at a full collection that a flood of large bodies would otherwise bring on.
  let body: unknown;
  try {
    if (!checked.refused) body = JSON.parse(bytes.toString("utf8"));
  } finally {
    req.release?.();
  }
  if (!checked.refused) return { body };
  const { kind, message, details } = checked.refused;
  return { refused: new GatewayError(kind, message, details === undefined ? {} : { details }), id: checked.id };
}

/** A ZktService method called in process for the request's caller (the guard admits it there). */
type Run = <I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: (req: MessageShape<I>, ctx: HandlerContext) => Promise<MessageInitShape<O>> | MessageInitShape<O>,
  message: MessageShape<I>,
) => InProcessCall<O>;

/** The body's operation as the ZktService request it asks for; the answer's fields. */
async function runOperation(zkt: ServiceImpl<typeof ZktService>, op: ZktOperation, run: Run): Promise<Record<string, unknown>> {
  const written = (r: { hash: string; queueId: string; receipt?: ReceiptMsg | undefined }) => ({
    hash: r.hash,
    transactionHash: r.hash,
    queueId: r.queueId,
    ...(r.receipt ? { receipt: receiptBody(r.receipt) } : {}),
  });
  switch (op.op) {
    case "message": {
      const message = create(WriteMessageRequestSchema, { arguments: op.message, wait: op.wait, callbackUrl: op.callbackUrl ?? "" });
      return written(await run(ZktService.method.writeMessage, zkt.writeMessage, message).result);
    }
    case "call": {
      // REST has one call style; the ABI says whether it is a read or a write. Asked before the ABI is
      // turned into a message: that also refuses an oversized ABI before it costs a conversion.
      const read = isReadOnlyCall(op.abi, op.method, op.arguments.length);
      const fields = { to: op.to, abi: fromJsonList(op.abi as JsonValue[]), method: op.method, arguments: fromJsonList(op.arguments) };
      if (read) {
        const r = await run(ZktService.method.readContract, zkt.readContract, create(ReadContractRequestSchema, fields)).result;
        return { output: list(r.output) };
      }
      const message = create(WriteContractRequestSchema, { ...fields, wait: op.wait, callbackUrl: op.callbackUrl ?? "" });
      return written(await run(ZktService.method.writeContract, zkt.writeContract, message).result);
    }
    case "deploy": {
      const message = create(DeployContractRequestSchema, {
        code: op.code,
        arguments: fromJsonList(op.arguments),
        contractName: op.contractName ?? "",
        wait: op.wait,
        callbackUrl: op.callbackUrl ?? "",
      });
      const r = await run(ZktService.method.deployContract, zkt.deployContract, message).result;
      return { contractAddress: r.contractAddress, abi: list(r.abi), hash: r.hash, transactionHash: r.hash, queueId: r.queueId };
    }
  }
}

/** GET /zkt/transactions/<queueId>: a write's status, Stability-shaped. */
function statusRoute(zkt: ServiceImpl<typeof ZktService>): RestRoute {
  return {
    method: "GET",
    pattern: /^\/zkt\/transactions\/([^/]+)$/,
    renderError,
    async handle(req) {
      const message = create(GetTransactionStatusRequestSchema, { queueId: decodeURIComponent(req.params[0]!) });
      const call = callInProcess(ZktService.method.getTransactionStatus, zkt.getTransactionStatus, message, { clientIp: req.clientIp }, req.path);
      try {
        const r = await call.result;
        return json(
          200,
          {
            queueId: r.queueId,
            status: statusName[r.status],
            transactionHash: r.transactionHash,
            errorMessage: r.errorMessage || null,
            createdAt: r.createdAt,
            processedAt: r.processedAt || null,
            statusReason: r.statusReason || null,
          },
          call.headers(),
        );
      } catch (err) {
        const answer = zktErrorAnswer(toGatewayError(err));
        answer.headers = { ...call.headers(), ...answer.headers };
        return answer;
      }
    },
  };
}

/** A success; fields the body carried that no operation knows are named, so a typo does not pass unseen. */
function ok(fields: Record<string, unknown>, id: ZktId | undefined, headers: Record<string, string>, ignored: string[]): HttpAnswer {
  return json(200, { success: true, ...fields, ...(ignored.length > 0 ? { ignoredFields: ignored } : {}), ...(id !== undefined ? { id } : {}) }, headers);
}
