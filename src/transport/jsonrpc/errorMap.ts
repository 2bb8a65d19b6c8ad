// GatewayError → JSON-RPC 2.0 error object. The one place JSON-RPC error shapes are decided.
import { failsWholeRequest, type GatewayError, type JsonValue } from "../../errors.js";

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: JsonValue;
}

export function toJsonRpcError(err: GatewayError): JsonRpcErrorObject {
  return err.details === undefined ? { code: err.jsonRpcCode, message: err.message } : { code: err.jsonRpcCode, message: err.message, data: err.details };
}

/**
 * Conditions of the whole request set the HTTP status of a JSON-RPC answer, and so does an invalid request
 * (400, as the docs say: `"method": ""`, params nested too deep); method-level errors stay 200. (A batch's
 * items are answered inside its 200.)
 */
export function httpStatusForJsonRpc(err: GatewayError): number {
  return failsWholeRequest(err) || err.kind === "invalid_request" ? err.httpStatus : 200;
}
