// JSON-RPC 2.0 envelope handling over HTTP, exactly as the specification says: single calls, batches,
// notifications, parse and invalid-request errors. It decides nothing about methods: the dispatcher does.
import { GatewayError, toGatewayError } from "../../errors.js";
import type { RpcOutcome } from "../../chain/upstreamPool.js";
import type { CoreCall, RpcDispatcher } from "../../rpc/rpcCore.js";
import type { Access } from "../../keys/access.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./errorMap.js";
import { andThen, type MaybePromise } from "../../maybePromise.js";
import { numericIdTexts } from "./rawIds.js";

export interface JsonRpcHttpAnswer {
  status: number;
  /** Absent when every request was a notification (HTTP 204). */
  body?: string;
  headers?: Record<string, string>;
}

/** A numeric id is kept as its own text (`raw`), so it goes back exactly as sent (JSON.parse rounds). */
type Id = string | { raw: string } | null;
type Parsed = { ok: true; id: Id; notification: boolean; call: CoreCall } | { ok: false; id: Id; error: GatewayError };

/** What admission decided: the caller's access, and headers for the answer. */
export interface Admitted {
  access: Access;
  headers: Record<string, string>;
}

export interface JsonRpcOptions {
  maxBatchSize: number;
  /**
   * Admission (authentication, rate limits) for `weight` requests — a batch when `batch` — after the envelope
   * is known and before anything runs. A throw refuses the whole request (or batch). Public, no limits: absent.
   */
  admit?: (weight: number, batch: boolean) => MaybePromise<Admitted>;
  /** Wraps an admitted request's run (idempotency); its errors are answered as JSON-RPC errors. */
  around?: (batch: boolean, admitted: Admitted, run: () => Promise<JsonRpcHttpAnswer>) => Promise<JsonRpcHttpAnswer>;
}

/**
 * The answer to one HTTP body: at once when nothing had to wait (a locally answered call, a local rate-limit
 * decision), else a promise. A dispatcher that fails (throws or rejects) fails it the same way, for the
 * caller to render.
 */
export function handleJsonRpc(text: string, dispatcher: RpcDispatcher, options: JsonRpcOptions): MaybePromise<JsonRpcHttpAnswer> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return errorAnswer(400, null, new GatewayError("parse_error", "Parse error: the body is not valid JSON"));
  }
  if (Array.isArray(body)) return handleBatch(body, text, dispatcher, options);
  const parsed = parseRequest(body, () => singleIdText(text, body));
  if (!parsed.ok) return errorAnswer(400, parsed.id, parsed.error);
  return andThen(admit(options, 1, false, parsed.id), (admitted) => {
    if ("refused" in admitted) return admitted.refused;
    const run = (): MaybePromise<JsonRpcHttpAnswer> =>
      andThen(dispatcher.callMany({ access: admitted.access }, [parsed.call]), ([outcome]) => {
        if (parsed.notification) return withHeaders({ status: 204 }, admitted.headers);
        const status = outcome && !outcome.ok ? httpStatusForJsonRpc(outcome.error) : 200;
        return withHeaders(withRetryAfter({ status, body: reply(parsed.id, outcome!) }, outcome), admitted.headers);
      });
    if (!options.around) return run();
    return options.around(false, admitted, async () => run()).catch((err: unknown) => withHeaders(refusal(err, parsed.id), admitted.headers));
  });
}

async function handleBatch(body: unknown[], text: string, dispatcher: RpcDispatcher, options: JsonRpcOptions): Promise<JsonRpcHttpAnswer> {
  if (body.length === 0) return errorAnswer(400, null, new GatewayError("invalid_request", "Invalid Request: empty batch"));
  if (body.length > options.maxBatchSize) {
    return errorAnswer(
      400,
      null,
      new GatewayError(
        "invalid_request",
        `Invalid Request: a batch may hold at most ${options.maxBatchSize} requests, this one has ${body.length}; set your client's batch size to ${options.maxBatchSize} (viem: http(url, { batch: { batchSize: ${options.maxBatchSize} } }); ethers: new JsonRpcProvider(url, network, { batchMaxCount: ${options.maxBatchSize} }))`,
      ),
    );
  }
  let idTexts: (string | undefined)[] | undefined;
  const parsed = body.map((r, i) => parseRequest(r, () => (idTexts ??= batchIdTexts(text, body))[i]));
  const admitted = await admit(options, body.length, true, null);
  if ("refused" in admitted) return admitted.refused;
  const run = async (): Promise<JsonRpcHttpAnswer> => {
    const outcomes = await dispatch(parsed, { access: admitted.access }, dispatcher);
    // A transport-level failure (e.g. rate limit) of the whole batch is answered once, not per item.
    const whole = batchWideError(outcomes);
    if (whole) return errorAnswer(httpStatusForJsonRpc(whole), null, whole);
    const replies: string[] = [];
    parsed.forEach((p, i) => {
      if (p.ok && p.notification) return;
      replies.push(reply(p.id, p.ok ? outcomes[i]! : { ok: false, error: p.error }));
    });
    return withHeaders(replies.length === 0 ? { status: 204 } : { status: 200, body: `[${replies.join(",")}]` }, admitted.headers);
  };
  if (!options.around) return run();
  return options.around(true, admitted, run).catch((err: unknown) => withHeaders(refusal(err, null), admitted.headers));
}

type Admission = Admitted | { refused: JsonRpcHttpAnswer };
/** Public access with no limits (tests, specification examples); frozen: answers may share its headers. */
const UNLIMITED: Admitted = { access: { kind: "public" }, headers: Object.freeze({}) as Record<string, string> };

/** Admission, without a promise when the decision is made at once (the local limiter). */
function admit(options: JsonRpcOptions, weight: number, batch: boolean, id: Id): MaybePromise<Admission> {
  if (!options.admit) return UNLIMITED;
  try {
    const admitted = options.admit(weight, batch);
    return admitted instanceof Promise ? admitted.catch((err: unknown) => ({ refused: refusal(err, id) })) : admitted;
  } catch (err) {
    return { refused: refusal(err, id) };
  }
}

function refusal(err: unknown, id: Id): JsonRpcHttpAnswer {
  const gw = toGatewayError(err);
  return errorAnswer(httpStatusForJsonRpc(gw), id, gw);
}

/** The admission's headers under the answer's own; no copy when the answer has none (the usual case). */
function withHeaders(answer: JsonRpcHttpAnswer, headers: Record<string, string>): JsonRpcHttpAnswer {
  if (answer.headers === undefined) answer.headers = headers;
  else answer.headers = { ...headers, ...answer.headers };
  return answer;
}

async function dispatch(parsed: Parsed[], ctx: { access: Access }, dispatcher: RpcDispatcher): Promise<(RpcOutcome | undefined)[]> {
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
  if (first && !first.ok && httpStatusForJsonRpc(first.error) !== 200 && outcomes.every((o) => o === undefined || (!o.ok && o.error === first.error)))
    return first.error;
  return undefined;
}

/** The id's text of a single request whose id is a number: found at once in compact JSON, else scanned for. */
function singleIdText(text: string, body: unknown): string | undefined {
  const id = (body as { id: number }).id;
  const at = text.indexOf('"id":');
  if (at >= 0 && Number.isSafeInteger(id)) {
    const canonical = String(id);
    const after = at + 5 + canonical.length;
    // The first "id" key holds exactly the canonical digits: the usual client's body, no scan needed.
    const next = text.charCodeAt(after);
    if (text.startsWith(canonical, at + 5) && !((next >= 0x30 && next <= 0x39) || next === 0x2e || next === 0x65 || next === 0x45)) return canonical;
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
  if ("params" in r && (typeof r.params !== "object" || r.params === null)) return invalid('"params" must be an array or an object');
  const params = (r.params ?? []) as CoreCall["params"];
  return { ok: true, id, notification: !hasId, call: { method: r.method, params } };
}

function idText(id: Id): string {
  return id === null ? "null" : typeof id === "string" ? JSON.stringify(id) : id.raw;
}

function reply(id: Id, outcome: RpcOutcome): string {
  return outcome.ok
    ? `{"jsonrpc":"2.0","id":${idText(id)},"result":${outcome.raw ?? JSON.stringify(outcome.result)}}`
    : `{"jsonrpc":"2.0","id":${idText(id)},"error":${JSON.stringify(toJsonRpcError(outcome.error))}}`;
}

function errorAnswer(status: number, id: Id, error: GatewayError): JsonRpcHttpAnswer {
  return withRetryAfter({ status, body: reply(id, { ok: false, error }) }, { ok: false, error });
}

function withRetryAfter(answer: JsonRpcHttpAnswer, outcome: RpcOutcome | undefined): JsonRpcHttpAnswer {
  if (outcome && !outcome.ok && outcome.error.retryAfterSeconds !== undefined) answer.headers = { "retry-after": String(outcome.error.retryAfterSeconds) };
  return answer;
}
