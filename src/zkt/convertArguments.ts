// JSON arguments → values ethers can encode, with errors that name the argument and say what is wrong.
// The reference API sends every argument as a string (numbers decimal or 0x, booleans "true"/"false",
// arrays and tuples as JSON text); native JSON numbers, booleans, arrays and objects are accepted too.
import { getAddress, type ParamType } from "ethers";
import { GatewayError, type JsonValue } from "../errors.js";

export type AbiValue = string | bigint | boolean | AbiValue[];

export function convertArguments(inputs: readonly ParamType[], args: JsonValue[], what: string): AbiValue[] {
  if (args.length !== inputs.length) {
    throw new GatewayError(
      "validation",
      `${what} takes ${inputs.length} argument${inputs.length === 1 ? "" : "s"} (${inputs.map((p) => p.format("full")).join(", ")}), got ${args.length}`,
    );
  }
  return inputs.map((p, i) => convertValue(p, args[i]!, `argument ${i + 1}${p.name ? ` (${p.name})` : ""}`));
}

function fail(where: string, why: string): never {
  throw new GatewayError("validation", `${where}: ${why}`);
}

function convertValue(p: ParamType, v: JsonValue, where: string): AbiValue {
  if (p.isArray()) {
    const arr = typeof v === "string" ? parseJsonText(v, where, "array") : v;
    if (!Array.isArray(arr)) fail(where, `expected an array for ${p.format("sighash")}`);
    if (p.arrayLength >= 0 && arr.length !== p.arrayLength) fail(where, `expected ${p.arrayLength} elements for ${p.format("sighash")}, got ${arr.length}`);
    return arr.map((x, i) => convertValue(p.arrayChildren, x, `${where}[${i}]`));
  }
  if (p.isTuple()) {
    const t = typeof v === "string" ? parseJsonText(v, where, "tuple") : v;
    const comps = p.components;
    if (Array.isArray(t)) {
      if (t.length !== comps.length) fail(where, `expected a tuple of ${comps.length} values, got ${t.length}`);
      return comps.map((c, i) => convertValue(c, t[i]!, `${where}.${c.name || i}`));
    }
    if (t && typeof t === "object") {
      return comps.map((c, i) => {
        if (!(c.name in t)) fail(where, `missing tuple field "${c.name}"`);
        return convertValue(c, (t as Record<string, JsonValue>)[c.name]!, `${where}.${c.name || i}`);
      });
    }
    fail(where, `expected a tuple (array or object) for ${p.format("sighash")}`);
  }
  const type = p.type;
  if (type === "address") {
    if (typeof v !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(v)) fail(where, `${JSON.stringify(v)} is not an address (0x followed by 40 hex digits)`);
    try {
      return getAddress(v);
    } catch {
      fail(where, `${v} has an invalid checksum (mixed case that does not match EIP-55)`);
    }
  }
  if (type === "bool") {
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    fail(where, `${JSON.stringify(v)} is not a boolean (true/false)`);
  }
  if (type === "string") {
    if (typeof v !== "string") fail(where, `expected a string, got ${JSON.stringify(v)}`);
    return v;
  }
  const int = /^(u?)int(\d*)$/.exec(type);
  if (int) return convertInteger(v, int[1] === "u", Number(int[2] || 256), type, where);
  const bytes = /^bytes(\d*)$/.exec(type);
  if (bytes) {
    if (typeof v !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(v)) fail(where, `${JSON.stringify(v)} is not 0x-prefixed hex bytes`);
    const n = (v.length - 2) / 2;
    if (bytes[1] && n !== Number(bytes[1])) fail(where, `${type} needs exactly ${bytes[1]} bytes, got ${n}`);
    return v.toLowerCase();
  }
  fail(where, `unsupported ABI type ${type}`);
}

function convertInteger(v: JsonValue, unsigned: boolean, bits: number, type: string, where: string): bigint {
  let n: bigint;
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) fail(where, `${v} is not a safe integer; pass large numbers as decimal strings`);
    n = BigInt(v);
  } else if (typeof v === "string" && /^-?(0|[1-9]\d*)$/.test(v.trim())) n = BigInt(v.trim());
  else if (typeof v === "string" && /^0x[0-9a-fA-F]+$/.test(v)) n = BigInt(v);
  else fail(where, `${JSON.stringify(v)} is not an integer (decimal or 0x string, or a JSON number)`);
  const min = unsigned ? 0n : -(1n << BigInt(bits - 1));
  const max = unsigned ? (1n << BigInt(bits)) - 1n : (1n << BigInt(bits - 1)) - 1n;
  if (n < min || n > max) fail(where, `${n} is out of range for ${type} (${min}..${max})`);
  return n;
}

function parseJsonText(s: string, where: string, kind: string): JsonValue {
  try {
    return JSON.parse(s) as JsonValue;
  } catch {
    fail(where, `expected a ${kind} (JSON array/object or its JSON text), got ${JSON.stringify(s)}`);
  }
}
