// What the pool sends its nodes and makes of their answers: calls, per-call outcomes, and reading an answer
// (a single call's result sliced out of the node's text unparsed; anything else parsed and matched by id).
import type { GatewayError, JsonValue } from "../errors.js";

export interface RpcCall {
  method: string;
  params: JsonValue[];
}

/**
 * A call's outcome: a result, or a GatewayError to report for that call. `raw`, when present, is the result's
 * JSON text exactly as the node sent it: JSON-RPC replies splice it in unparsed, and `result` is then parsed
 * only if something reads it (the cache, Connect).
 */
export type RpcOutcome = { ok: true; result: JsonValue; raw?: string } | { ok: false; error: GatewayError };

/** An outcome that parses its raw JSON only when `result` is first read. */
export function rawOutcome(raw: string): RpcOutcome {
  let parsed: JsonValue | undefined;
  return {
    ok: true,
    raw,
    get result(): JsonValue {
      return (parsed ??= JSON.parse(raw) as JsonValue);
    },
  };
}

/** A node gave no usable answer (timeout, connection, 5xx, not JSON): the pool fails over. */
export class TransientUpstreamError extends Error {}

/** A single call's result as the node's JSON text, cut out of its answer. */
export class RawResult {
  constructor(readonly raw: string) {}
}

/** The result's JSON text when `text` is `prefix` + one JSON value + "}", else undefined (then parse). */
export function sliceResult(text: string, prefix: string): RawResult | undefined {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  if (!text.startsWith(prefix) || text.charCodeAt(end - 1) !== 0x7d) return undefined;
  const raw = text.slice(prefix.length, end - 1);
  // A cheap shape check that the value is whole: it must open and close like one JSON value. Anything else
  // goes through JSON.parse, which rejects garbage (and a node answering garbage is failed over).
  const first = raw.charCodeAt(0);
  const last = raw.charCodeAt(raw.length - 1);
  const whole =
    (first === 0x22 && last === 0x22 && raw.length >= 2) || // "…"
    (first === 0x7b && last === 0x7d) || // {…}
    (first === 0x5b && last === 0x5d) || // […]
    raw === "null" ||
    raw === "true" ||
    raw === "false" ||
    /^-?\d+$/.test(raw);
  return whole ? new RawResult(raw) : undefined;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A node that answers garbage is as good as down.
    throw new TransientUpstreamError("the answer is not JSON");
  }
}

export interface UpstreamReply {
  id?: unknown;
  result?: JsonValue;
  error?: { code: number; message: string; data?: JsonValue };
}

export function isReply(v: unknown): v is UpstreamReply {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
