// 0x-hex validation for the typed RPC fields (addresses, quantities, data, block tags).
import { GatewayError } from "../errors.js";

export function requireAddress(field: string, value: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value))
    throw new GatewayError("invalid_params", `Invalid params: ${field} must be a 0x-prefixed 20-byte hex address, got "${value}"`);
  return value;
}

export function requireData(field: string, value: string): string {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(value)) throw new GatewayError("invalid_params", `Invalid params: ${field} must be 0x-prefixed hex bytes`);
  return value;
}

const TAGS = new Set(["latest", "pending", "earliest", "safe", "finalized"]);
export function requireBlockTag(field: string, value: string): string {
  if (value === "") return "latest";
  if (TAGS.has(value) || /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(value)) return value;
  throw new GatewayError(
    "invalid_params",
    `Invalid params: ${field} must be a block tag (latest, pending, earliest, safe, finalized) or a 0x-hex block number, got "${value}"`,
  );
}
