// JSON-RPC 2.0 envelope handling, exactly as the specification says: single calls, batches, notifications,
// parse and invalid-request errors, ids echoed as sent. It decides nothing: every call runs through the
// RpcService handlers (Call for one, Batch for several; see JsonRpcHandlers), which apply the policy.
import { GatewayError, toGatewayError } from "../../errors.js";
import type { CoreCall } from "../../rpc/rpcCore.js";
import { requireBatchSize } from "../../rpc/batchSize.js";
import { httpStatusForJsonRpc, toJsonRpcError, type JsonRpcErrorObject } from "./errorMap.js";
import { andThen, type MaybePromise } from "../../maybePromise.js";
import { numericIdTexts } from "./rawIds.js";

export interface JsonRpcHttpAnswer {
  status: number;
  /** Absent when every request was a notification (HTTP 204). */
  body?: string;
  headers?: Record<string, string>;
}

/** What a handler answered, with the headers it set (X-RateLimit-*, Idempotent-Replayed), also on failure. */
export interface Handled<T> {
  outcome: { ok: true; value: T } | { ok: false; error: GatewayError };
  headers: Record<string, string>;
}

/** One call of a batch: its result's JSON text, or its JSON-RPC error. */
export type ItemOutcome = { ok: true; json: string } | { ok: false; error: JsonRpcErrorObject };

/** How the envelope's calls reach the RpcService handlers; a failed outcome refuses the request as a whole. */
export interface JsonRpcHandlers {
  /** One call (RpcService.Call): its result's JSON text. */
  call(call: CoreCall): MaybePromise<Handled<string>>;
  /** Several calls (RpcService.Batch), in order. */
  batch(calls: CoreCall[]): MaybePromise<Handled<ItemOutcome[]>>;
  /**
   * `weight` malformed requests, which run nothing but still count against the caller's limits (an unlimited
   * stream of bad JSON would otherwise cost parsing for free); a failed outcome (a limit, a bad key) answers instead.
   */
  malformed(weight: number): MaybePromise<Handled<void>>;
}

/** A numeric id is kept as its own text (`raw`), so it goes back exactly as sent (JSON.parse rounds). */
type Id = string | { raw: string } | null;
type Parsed = { ok: true; id: Id; notification: boolean; call: CoreCall } | { ok: false; id: Id; error: GatewayError };

/** The answer to one body (HTTP or a WebSocket message): at once when nothing had to wait, else a promise. */
export function handleJsonRpc(text: string, handlers: JsonRpcHandlers, maxBatchSize: number): MaybePromise<JsonRpcHttpAnswer> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return charged(handlers, 1, (h) => errorAnswer(400, null, new GatewayError("parse_error", "Parse error: the body is not valid JSON"), h));
  }
  if (Array.isArray(body)) return handleBatch(body, text, handlers, maxBatchSize);
  const parsed = parseRequest(body, () => singleIdText(text, body));
  if (!parsed.ok) return charged(handlers, 1, (h) => errorAnswer(400, parsed.id, parsed.error, h));
  return andThen(handlers.call(parsed.call), ({ outcome, headers }) => {
    if (outcome.ok) return parsed.notification ? { status: 204, headers } : { status: 200, body: resultReply(parsed.id, outcome.value), headers };
    const status = httpStatusForJsonRpc(outcome.error);
    // A notification is not answered, unless the request as a whole was refused (a limit, a bad key).
    if (parsed.notification && status === 200) return { status: 204, headers };
    return errorAnswer(status, parsed.id, outcome.error, headers);
  });
}

function handleBatch(body: unknown[], text: string, handlers: JsonRpcHandlers, maxBatchSize: number): MaybePromise<JsonRpcHttpAnswer> {
  try {
    requireBatchSize(body.length, maxBatchSize);
  } catch (err) {
    return charged(handlers, 1, (h) => errorAnswer(400, null, toGatewayError(err), h));
  }
  let idTexts: (string | undefined)[] | undefined;
  const parsed = body.map((r, i) => parseRequest(r, () => (idTexts ??= batchIdTexts(text, body))[i]));
  const calls: CoreCall[] = [];
  for (const p of parsed) if (p.ok) calls.push(p.call);
  const render = (items: ItemOutcome[], headers: Record<string, string> | undefined): JsonRpcHttpAnswer => {
    const replies: string[] = [];
    let next = 0;
    for (const p of parsed) {
      if (!p.ok) replies.push(errorReply(p.id, toJsonRpcError(p.error)));
      else {
        const item = items[next++]!;
        if (p.notification) continue;
        replies.push(item.ok ? resultReply(p.id, item.json) : errorReply(p.id, item.error));
      }
    }
    const answer: JsonRpcHttpAnswer = replies.length === 0 ? { status: 204 } : { status: 200, body: `[${replies.join(",")}]` };
    if (headers) answer.headers = headers;
    return answer;
  };
  const run = (): MaybePromise<JsonRpcHttpAnswer> =>
    andThen(handlers.batch(calls), ({ outcome, headers }) =>
      outcome.ok ? render(outcome.value, headers) : errorAnswer(httpStatusForJsonRpc(outcome.error), null, outcome.error, headers),
    );
  const malformed = body.length - calls.length;
  if (malformed === 0) return run();
  // The malformed entries count as requests too; with nothing well-formed to run, only they are answered.
  return charged(handlers, malformed, (headers) => (calls.length === 0 ? render([], headers) : run()));
}

/** Counts `weight` malformed requests, then answers as `answer` says (with the limit's headers), or with the refusal. */
function charged(
  handlers: JsonRpcHandlers,
  weight: number,
  answer: (headers: Record<string, string>) => MaybePromise<JsonRpcHttpAnswer>,
): MaybePromise<JsonRpcHttpAnswer> {
  return andThen(handlers.malformed(weight), ({ outcome, headers }) =>
    outcome.ok ? answer(headers) : errorAnswer(httpStatusForJsonRpc(outcome.error), null, outcome.error, headers),
  );
}

/** The id's text of a single request whose id is a number: found at once in compact JSON, else scanned for. */
function singleIdText(text: string, body: unknown): string | undefined {
  const id = (body as { id: number }).id;
  const at = text.indexOf('"id":');
  if (at >= 0 && Number.isSafeInteger(id)) {
    const canonical = String(id);
    const after = at + 5 + canonical.length;
    // The only "id" key holds exactly the canonical digits: the usual client's body, no scan needed. (Another
    // "id" key may be inside params, and the first one found its: `"params":[{"id":7}],"id":7.0`.)
    const next = text.charCodeAt(after);
    if (
      text.startsWith(canonical, at + 5) &&
      !((next >= 0x30 && next <= 0x39) || next === 0x2e || next === 0x65 || next === 0x45) &&
      text.indexOf('"id":', after) < 0
    )
      return canonical;
  }
  return numericIdTexts(text, false)[0];
}

/**
 * The ids' texts of a batch. Compact JSON from the usual client holds one `"id":` per element, each followed by
 * its id's canonical digits: checked with indexOf (native) instead of scanning every character; anything else
 * (spaces, big or fractional ids, "id" keys in params) is scanned for.
 */
function batchIdTexts(text: string, body: unknown[]): (string | undefined)[] {
  const out: (string | undefined)[] = new Array(body.length);
  let at = -1;
  for (let i = 0; i < body.length; i++) {
    const el = body[i];
    if (typeof el !== "object" || el === null || Array.isArray(el) || !("id" in el)) continue;
    at = text.indexOf('"id":', at + 1);
    if (at < 0) return numericIdTexts(text, true);
    const id = (el as { id: unknown }).id;
    if (typeof id !== "number") continue;
    const canonical = String(id);
    const next = text.charCodeAt(at + 5 + canonical.length);
    if (!Number.isSafeInteger(id) || !text.startsWith(canonical, at + 5) || (next >= 0x30 && next <= 0x39) || next === 0x2e || next === 0x65 || next === 0x45)
      return numericIdTexts(text, true);
    out[i] = canonical;
  }
  // More "id" keys than elements with one: some are inside params, so the pairing above may be wrong.
  return text.indexOf('"id":', at + 1) < 0 ? out : numericIdTexts(text, true);
}

function parseRequest(req: unknown, numericIdText: () => string | undefined): Parsed {
  if (typeof req !== "object" || req === null || Array.isArray(req)) {
    return { ok: false, id: null, error: new GatewayError("invalid_request", "Invalid Request: expected a JSON-RPC request object") };
  }
  const r = req as Record<string, unknown>;
  const hasId = "id" in r;
  const idValid = !hasId || r.id === null || typeof r.id === "string" || (typeof r.id === "number" && Number.isFinite(r.id));
  const id: Id = !hasId || !idValid ? null : typeof r.id === "number" ? { raw: numericIdText() ?? String(r.id) } : (r.id as string | null);
  const invalid = (why: string): Parsed => ({ ok: false, id, error: new GatewayError("invalid_request", `Invalid Request: ${why}`) });
  if (r.jsonrpc !== "2.0") return invalid('"jsonrpc" must be exactly "2.0"');
  if (typeof r.method !== "string") return invalid('"method" must be a string');
  if (!idValid) return invalid('"id" must be a string, a number or null');
  // null is no params, as nodes read it (geth, anvil): {"params": null} is answered, not refused.
  if ("params" in r && r.params !== null && typeof r.params !== "object") return invalid('"params" must be an array, an object or null');
  const params = (r.params ?? []) as CoreCall["params"];
  return { ok: true, id, notification: !hasId, call: { method: r.method, params } };
}

function idText(id: Id): string {
  return id === null ? "null" : typeof id === "string" ? JSON.stringify(id) : id.raw;
}

function resultReply(id: Id, json: string): string {
  return `{"jsonrpc":"2.0","id":${idText(id)},"result":${json}}`;
}

function errorReply(id: Id, error: JsonRpcErrorObject): string {
  return `{"jsonrpc":"2.0","id":${idText(id)},"error":${JSON.stringify(error)}}`;
}

/** An error answer; a rate-limited caller is told when to come back (Retry-After). */
function errorAnswer(status: number, id: Id, error: GatewayError, headers: Record<string, string> | undefined): JsonRpcHttpAnswer {
  const answer: JsonRpcHttpAnswer = { status, body: errorReply(id, toJsonRpcError(error)) };
  if (error.retryAfterSeconds !== undefined) answer.headers = { ...headers, "retry-after": String(error.retryAfterSeconds) };
  else if (headers) answer.headers = headers;
  return answer;
}
