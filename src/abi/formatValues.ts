// Decoded ABI values → JSON: integers as decimal strings, addresses checksummed, bytes as hex; the
// outputs of a call are flattened (a returned tuple's fields become elements of the output array).
import type { ParamType, Result } from "ethers";
import type { JsonValue } from "../errors.js";

export function formatValue(p: ParamType, v: unknown): JsonValue {
  if (p.isArray()) return (v as unknown[]).map((x) => formatValue(p.arrayChildren, x));
  if (p.isTuple()) return p.components.map((c, i) => formatValue(c, (v as unknown[])[i]));
  if (typeof v === "bigint") return v.toString(10);
  if (typeof v === "boolean" || typeof v === "string") return v;
  return String(v);
}

export function formatOutputs(outputs: readonly ParamType[], result: Result): JsonValue[] {
  const flat: JsonValue[] = [];
  const push = (p: ParamType, v: unknown): void => {
    if (p.isTuple()) p.components.forEach((c, i) => push(c, (v as unknown[])[i]));
    else flat.push(formatValue(p, v));
  };
  outputs.forEach((p, i) => push(p, result[i]));
  return flat;
}

/** Named decoded arguments of an event or error, for receipts and revert details. */
export function formatNamed(inputs: readonly ParamType[], result: Result): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  inputs.forEach((p, i) => (out[p.name || String(i)] = formatValue(p, result[i])));
  return out;
}
