// GatewayError → the ZKT error body `{success: false, error, errorCode, details?, id?}` and its HTTP status.
import type { GatewayError } from "../../errors.js";
import { json, retryAfter, type HttpAnswer } from "../http/restRouter.js";
import type { ZktId } from "./parseZktBody.js";

export function zktErrorAnswer(err: GatewayError, id?: ZktId): HttpAnswer {
  const body = {
    success: false,
    error: err.message,
    errorCode: err.zktCode,
    ...(err.details !== undefined ? { details: err.details } : {}),
    ...(id !== undefined ? { id } : {}),
  };
  return json(err.httpStatus, body, retryAfter(err));
}
