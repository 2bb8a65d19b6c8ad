// Picks the ZKT operation from the body's shape (Stability-compatible): V1 message `{arguments: string, wait?}`,
// V2 call `{to, abi, method, arguments: [], wait?}`, V2 deploy `{code, arguments?, contractName?, wait?}`.
// Stability's OpenAPI leaves request objects open, so fields no operation knows are ignored (and named in the
// answer); a body that mixes two operations' fields, or fits none, is refused naming what is wrong.
import { GatewayError, type JsonValue } from "../../errors.js";

export type ZktId = string | number;

type Operation =
  | { op: "message"; message: string; wait: boolean }
  | { op: "call"; to: string; abi: JsonValue; method: string; arguments: JsonValue[]; wait: boolean }
  | { op: "deploy"; code: string; arguments: JsonValue[]; contractName?: string; wait: boolean };

export type ZktOperation = Operation & {
  /** Fields of the body no operation knows: ignored. */
  ignored: string[];
  /** Where this write's outcome is POSTed (webhooks), when given. */
  callbackUrl?: string;
};

const COMMON = ["id", "callbackUrl"];
const FIELDS: Record<ZktOperation["op"], string[]> = {
  message: ["arguments", "wait"],
  call: ["to", "abi", "method", "arguments", "wait"],
  deploy: ["code", "arguments", "contractName", "wait"],
};

/** The request id, if the body has a usable one (echoed even on errors). */
export function idOf(body: unknown): ZktId | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const id = (body as Record<string, unknown>).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
}

export function parseZktBody(body: unknown): ZktOperation {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("the body must be a JSON object");
  const b = body as Record<string, JsonValue>;
  if ("id" in b && idOf(b) === undefined) throw invalid("id must be a string or a number");
  const has = (k: string): boolean => k in b && b[k] !== undefined;
  const callFields = ["to", "abi", "method"].filter(has);
  const op: ZktOperation["op"] = has("code") ? "deploy" : callFields.length > 0 ? "call" : "message";
  if (op === "deploy" && callFields.length > 0) {
    throw invalid(`fields from two request styles: code (deploy) cannot be combined with ${callFields.join(", ")} (contract call)`);
  }
  const known = new Set(Object.values(FIELDS).flat());
  const ignored = Object.keys(b).filter((k) => !COMMON.includes(k) && !known.has(k));
  const foreign = Object.keys(b).filter((k) => known.has(k) && !FIELDS[op].includes(k));
  if (foreign.length > 0) {
    const owners = foreign.map(
      (k) =>
        `"${k}" (${(Object.keys(FIELDS) as ZktOperation["op"][])
          .filter((o) => FIELDS[o].includes(k))
          .map(describe)
          .join(" or ")})`,
    );
    throw invalid(`fields of another operation in a ${describe(op)}: ${owners.join(", ")}`);
  }
  const parsed = parse(op, b, has);
  if (has("callbackUrl") && typeof b.callbackUrl !== "string") throw invalid(`callbackUrl must be a string URL, got ${typeName(b.callbackUrl)}`);
  return { ...parsed, ignored, ...(typeof b.callbackUrl === "string" ? { callbackUrl: b.callbackUrl } : {}) };
}

function parse(op: ZktOperation["op"], b: Record<string, JsonValue>, has: (k: string) => boolean): Operation {
  switch (op) {
    case "message": {
      if (!has("arguments"))
        throw invalid("arguments is required: a string to write a message, or an array with to, abi and method for a contract call (or code for a deploy)");
      if (Array.isArray(b.arguments))
        throw invalid("arguments is an array, but to, abi and method are missing: a contract call needs all of them (a plain message takes a string)");
      if (typeof b.arguments !== "string") throw invalid(`arguments must be a string (the message), got ${typeName(b.arguments)}`);
      if (has("wait") && typeof b.wait !== "boolean") throw invalid(`wait must be true or false, got ${typeName(b.wait)}`);
      return { op, message: b.arguments, wait: b.wait === true };
    }
    case "call": {
      const missing = ["to", "abi", "method", "arguments"].filter((k) => !has(k));
      if (missing.length > 0) throw invalid(`a contract call needs to, abi, method and arguments; missing: ${missing.join(", ")}`);
      if (typeof b.to !== "string") throw invalid(`to must be a string address, got ${typeName(b.to)}`);
      if (typeof b.method !== "string" || b.method === "") throw invalid("method must be a non-empty string (a function name or signature)");
      if (!Array.isArray(b.abi)) throw invalid(`abi must be an array of ABI entries, got ${typeName(b.abi)}`);
      if (!Array.isArray(b.arguments)) throw invalid(`arguments must be an array for a contract call ([] when none), got ${typeName(b.arguments)}`);
      if (has("wait") && typeof b.wait !== "boolean") throw invalid(`wait must be true or false, got ${typeName(b.wait)}`);
      return { op, to: b.to, abi: b.abi, method: b.method, arguments: b.arguments, wait: b.wait === true };
    }
    case "deploy": {
      if (typeof b.code !== "string") throw invalid(`code must be a string of Solidity source, got ${typeName(b.code)}`);
      if (has("arguments") && !Array.isArray(b.arguments)) throw invalid(`arguments must be an array of constructor arguments, got ${typeName(b.arguments)}`);
      if (has("contractName") && typeof b.contractName !== "string") throw invalid("contractName must be a string");
      if (has("wait") && typeof b.wait !== "boolean") throw invalid(`wait must be true or false, got ${typeName(b.wait)}`);
      // A deploy waits for mining unless told not to: its answer promises a contract that can be called.
      return {
        op,
        code: b.code,
        arguments: (b.arguments as JsonValue[] | undefined) ?? [],
        ...(typeof b.contractName === "string" ? { contractName: b.contractName } : {}),
        wait: b.wait !== false,
      };
    }
  }
}

function describe(op: ZktOperation["op"]): string {
  return op === "message" ? "message (V1)" : op === "call" ? "contract call (V2)" : "deploy (V2)";
}

function typeName(v: JsonValue | undefined): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function invalid(message: string): GatewayError {
  return new GatewayError("validation", message);
}
