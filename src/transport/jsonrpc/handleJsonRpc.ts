// JSON-RPC 2.0 envelope handling over HTTP, exactly as the specification says: single calls, batches,
// notifications, parse and invalid-request errors. It decides nothing about methods: the dispatcher does.
import { GatewayError, toGatewayError, type JsonValue } from "../../errors.js";
import type { RpcOutcome } from "../../chain/upstreamPool.js";
import type { CallContext, CoreCall, RpcDispatcher } from "../../rpc/rpcCore.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import { andThen, type MaybePromise } from "../../maybePromise.js";

export interface JsonRpcHttpAnswer {
  status: number;
  /** Absent when every request was a notification (HTTP 204). */
  body?: string;
  headers?: Record<string, string>;
}

type Id = string | number | null;
type Parsed = { ok: true; id: Id; notification: boolean; call: CoreCall } | { ok: false; id: Id; error: GatewayError };

export interface JsonRpcOptions {
  maxBatchSize: number;
  /**
   * Admission (rate limits) for `weight` requests, after the envelope is known and before anything runs;
   * returns headers to add. A throw refuses the whole request (or batch).
   */
  admit?: (weight: number) => MaybePromise<Record<string, string>>;
}

/**
 * The answer to one HTTP body: at once when nothing had to wait (a locally answered call, a local rate-limit
 * decision), else a promise. A dispatcher that fails (throws or rejects) fails it the same way, for the
 * caller to render.
 */
export function handleJsonRpc(text: string, ctx: CallContext, dispatcher: RpcDispatcher, options: JsonRpcOptions): MaybePromise<JsonRpcHttpAnswer> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return errorAnswer(400, null, new GatewayError("parse_error", "Parse error: the body is not valid JSON"));
  }
  if (Array.isArray(body)) return handleBatch(body, ctx, dispatcher, options);
  const parsed = parseRequest(body);
  if (!parsed.ok) return errorAnswer(400, parsed.id, parsed.error);
  return andThen(admit(options, 1, parsed.id), (admitted) => {
    if ("refused" in admitted) return admitted.refused;
    return andThen(dispatcher.callMany(ctx, [parsed.call]), ([outcome]) => {
      if (parsed.notification) return withHeaders({ status: 204 }, admitted.headers);
      const status = outcome && !outcome.ok ? httpStatusForJsonRpc(outcome.error) : 200;
      return withHeaders(withRetryAfter({ status, body: reply(parsed.id, outcome!) }, outcome), admitted.headers);
    });
  });
}

async function handleBatch(body: unknown[], ctx: CallContext, dispatcher: RpcDispatcher, options: JsonRpcOptions): Promise<JsonRpcHttpAnswer> {
  if (body.length === 0) return errorAnswer(400, null, new GatewayError("invalid_request", "Invalid Request: empty batch"));
  if (body.length > options.maxBatchSize) {
    return errorAnswer(400, null, new GatewayError("invalid_request", `Invalid Request: a batch may hold at most ${options.maxBatchSize} requests, this one has ${body.length}`));
  }
  const parsed = body.map(parseRequest);
  const admitted = await admit(options, body.length, null);
  if ("refused" in admitted) return admitted.refused;
  const outcomes = await dispatch(parsed, ctx, dispatcher);
  // A transport-level failure (e.g. rate limit) of the whole batch is answered once, not per item.
  const whole = batchWideError(outcomes);
  if (whole) return errorAnswer(httpStatusForJsonRpc(whole), null, whole);
  const replies: string[] = [];
  parsed.forEach((p, i) => {
    if (p.ok && p.notification) return;
    replies.push(reply(p.id, p.ok ? outcomes[i]! : { ok: false, error: p.error }));
  });
  return withHeaders(replies.length === 0 ? { status: 204 } : { status: 200, body: `[${replies.join(",")}]` }, admitted.headers);
}

type Admitted = { headers: Record<string, string> } | { refused: JsonRpcHttpAnswer };
/** Shared, so frozen: an answer may carry its admission's headers object as its own (withHeaders). */
const NO_HEADERS: Admitted = { headers: Object.freeze({}) };

/** Admission, without a promise when the decision is made at once (the local limiter). */
function admit(options: JsonRpcOptions, weight: number, id: Id): MaybePromise<Admitted> {
  if (!options.admit) return NO_HEADERS;
  const refused = (err: unknown): Admitted => {
    const gw = toGatewayError(err);
    return { refused: errorAnswer(httpStatusForJsonRpc(gw), id, gw) };
  };
  try {
    const headers = options.admit(weight);
    return headers instanceof Promise ? headers.then((h) => ({ headers: h }), refused) : { headers };
  } catch (err) {
    return refused(err);
  }
}

/** The admission's headers under the answer's own; no copy when the answer has none (the usual case). */
function withHeaders(answer: JsonRpcHttpAnswer, headers: Record<string, string>): JsonRpcHttpAnswer {
  if (answer.headers === undefined) answer.headers = headers;
  else answer.headers = { ...headers, ...answer.headers };
  return answer;
}

async function dispatch(parsed: Parsed[], ctx: CallContext, dispatcher: RpcDispatcher): Promise<(RpcOutcome | undefined)[]> {
  const calls: CoreCall[] = [];
  const index: number[] = [];
  parsed.forEach((p, i) => {
    if (p.ok) {
      calls.push(p.call);
      index.push(i);
    }
  });
  const outcomes: (RpcOutcome | undefined)[] = new Array(parsed.length);
  if (calls.length > 0) (await dispatcher.callMany(ctx, calls)).forEach((o, j) => (outcomes[index[j]!] = o));
  return outcomes;
}

function batchWideError(outcomes: (RpcOutcome | undefined)[]): GatewayError | undefined {
  const first = outcomes.find((o) => o !== undefined);
  if (first && !first.ok && httpStatusForJsonRpc(first.error) !== 200 && outcomes.every((o) => o === undefined || (!o.ok && o.error === first.error))) return first.error;
  return undefined;
}

function parseRequest(req: unknown): Parsed {
  if (typeof req !== "object" || req === null || Array.isArray(req)) {
    return { ok: false, id: null, error: new GatewayError("invalid_request", "Invalid Request: expected a JSON-RPC request object") };
  }
  const r = req as Record<string, unknown>;
  const hasId = "id" in r;
  const idValid = !hasId || r.id === null || typeof r.id === "string" || (typeof r.id === "number" && Number.isFinite(r.id));
  const id: Id = hasId && idValid ? (r.id as Id) : null;
  const invalid = (why: string): Parsed => ({ ok: false, id, error: new GatewayError("invalid_request", `Invalid Request: ${why}`) });
  if (r.jsonrpc !== "2.0") return invalid('"jsonrpc" must be exactly "2.0"');
  if (typeof r.method !== "string") return invalid('"method" must be a string');
  if (r.method === "") return invalid('"method" must not be empty');
  if (!idValid) return invalid('"id" must be a string, a number or null');
  if ("params" in r && (typeof r.params !== "object" || r.params === null)) return invalid('"params" must be an array or an object');
  const params = (r.params ?? []) as CoreCall["params"];
  return { ok: true, id, notification: !hasId, call: { method: r.method, params } };
}

function reply(id: Id, outcome: RpcOutcome): string {
  return outcome.ok
    ? `{"jsonrpc":"2.0","id":${typeof id === "number" ? id : JSON.stringify(id)},"result":${outcome.raw ?? JSON.stringify(outcome.result)}}`
    : JSON.stringify({ jsonrpc: "2.0", id, error: toJsonRpcError(outcome.error) });
}

function errorAnswer(status: number, id: Id, error: GatewayError): JsonRpcHttpAnswer {
  return withRetryAfter({ status, body: reply(id, { ok: false, error }) }, { ok: false, error });
}

function withRetryAfter(answer: JsonRpcHttpAnswer, outcome: RpcOutcome | undefined): JsonRpcHttpAnswer {
  if (outcome && !outcome.ok && outcome.error.retryAfterSeconds !== undefined) answer.headers = { "retry-after": String(outcome.error.retryAfterSeconds) };
  return answer;
}

