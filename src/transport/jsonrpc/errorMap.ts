// GatewayError → JSON-RPC 2.0 error object. The one place JSON-RPC error shapes are decided.
import type { GatewayError, JsonValue } from "../../errors.js";

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: JsonValue;
}

export function toJsonRpcError(err: GatewayError): JsonRpcErrorObject {
  return err.details === undefined ? { code: err.jsonRpcCode, message: err.message } : { code: err.jsonRpcCode, message: err.message, data: err.details };
}

/** Transport-level conditions change the HTTP status of a JSON-RPC answer; method-level errors stay 200. */
export function httpStatusForJsonRpc(err: GatewayError): number {
  switch (err.kind) {
    case "unauthorized":
    case "payload_too_large":
    case "rate_limited":
    case "upstream_unavailable":
    case "idempotency_mismatch":
    case "idempotency_in_progress":
      return err.httpStatus;
    default:
      return 200;
  }
}
