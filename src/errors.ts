// One error family for the whole gateway. Each kind carries its JSON-RPC code (JSON-RPC 2.0 / EIP-1474),
// HTTP status, Connect code and ZKT errorCode; each transport maps a GatewayError exactly once
// (transport/*/errorMap.ts), so the same fault gives the same answer everywhere.
import { Code } from "@connectrpc/connect";

export type ErrorKind =
  | "parse_error"
  | "invalid_request"
  | "method_not_found"
  | "invalid_params"
  | "internal"
  | "rate_limited"
  | "limit_exceeded"
  | "quota_exceeded"
  | "forbidden_target"
  | "transaction_rejected"
  | "execution_reverted"
  | "unauthorized"
  | "key_required"
  | "payload_too_large"
  | "unsupported_encoding"
  | "validation"
  | "compilation"
  | "upstream_unavailable"
  | "not_found"
  | "conflict"
  | "idempotency_mismatch"
  | "idempotency_in_progress"
  | "client_gone";

interface KindInfo {
  /**
   * A condition of the whole request or of the service (who called, how often, whether a node is there), not
   * of one call's method or params: it refuses a batch as a whole, and it sets a JSON-RPC answer's HTTP status.
   */
  wholeRequest?: true;
  jsonRpcCode: number;
  httpStatus: number;
  connectCode: Code;
  zktCode: string;
}

export const errorKinds: Record<ErrorKind, KindInfo> = {
  parse_error: { jsonRpcCode: -32700, httpStatus: 400, connectCode: Code.InvalidArgument, zktCode: "VALIDATION_ERROR" },
  invalid_request: { jsonRpcCode: -32600, httpStatus: 400, connectCode: Code.InvalidArgument, zktCode: "VALIDATION_ERROR" },
  method_not_found: { jsonRpcCode: -32601, httpStatus: 404, connectCode: Code.Unimplemented, zktCode: "VALIDATION_ERROR" },
  invalid_params: { jsonRpcCode: -32602, httpStatus: 400, connectCode: Code.InvalidArgument, zktCode: "VALIDATION_ERROR" },
  internal: { jsonRpcCode: -32603, httpStatus: 500, connectCode: Code.Internal, zktCode: "INTERNAL_ERROR" },
  rate_limited: { wholeRequest: true, jsonRpcCode: -32005, httpStatus: 429, connectCode: Code.ResourceExhausted, zktCode: "RATE_LIMITED" },
  // One call asks for more than a limit allows (eth_getLogs' block range or result count): EIP-1474's "limit
  // exceeded", that call's own error (the rest of a batch is answered).
  // A key's write quota (per day, per month) is spent: refused before anything is signed or journaled.
  quota_exceeded: { wholeRequest: true, jsonRpcCode: -32005, httpStatus: 429, connectCode: Code.ResourceExhausted, zktCode: "QUOTA_EXCEEDED" },
  // A key limited to some receivers writes to another: refused before anything is signed or journaled.
  forbidden_target: { jsonRpcCode: -32003, httpStatus: 403, connectCode: Code.PermissionDenied, zktCode: "FORBIDDEN_TARGET" },
  limit_exceeded: { jsonRpcCode: -32005, httpStatus: 400, connectCode: Code.ResourceExhausted, zktCode: "LIMIT_EXCEEDED" },
  transaction_rejected: { jsonRpcCode: -32003, httpStatus: 422, connectCode: Code.FailedPrecondition, zktCode: "TXN_NOT_PROCESSED" },
  // Reverts keep the node's own code (3 for geth/anvil) and data; see GatewayError.jsonRpcCode.
  execution_reverted: { jsonRpcCode: 3, httpStatus: 422, connectCode: Code.FailedPrecondition, zktCode: "TXN_NOT_PROCESSED" },
  // What only a key holder may do, asked without a key (a write on the public path, pending transactions):
  // -32003 as a refused write, Connect permission_denied; -32001 stays "unknown or revoked key".
  key_required: { jsonRpcCode: -32003, httpStatus: 403, connectCode: Code.PermissionDenied, zktCode: "UNAUTHORIZED" },
  unauthorized: { wholeRequest: true, jsonRpcCode: -32001, httpStatus: 401, connectCode: Code.Unauthenticated, zktCode: "UNAUTHORIZED" },
  payload_too_large: { wholeRequest: true, jsonRpcCode: -32600, httpStatus: 413, connectCode: Code.ResourceExhausted, zktCode: "PAYLOAD_TOO_LARGE" },
  // A compressed body (Content-Encoding gzip, deflate, br): refused unread rather than taken for bad JSON.
  unsupported_encoding: { wholeRequest: true, jsonRpcCode: -32600, httpStatus: 415, connectCode: Code.InvalidArgument, zktCode: "UNSUPPORTED_MEDIA_TYPE" },
  validation: { jsonRpcCode: -32602, httpStatus: 400, connectCode: Code.InvalidArgument, zktCode: "VALIDATION_ERROR" },
  compilation: { jsonRpcCode: -32602, httpStatus: 400, connectCode: Code.InvalidArgument, zktCode: "COMPILATION_ERROR" },
  upstream_unavailable: { wholeRequest: true, jsonRpcCode: -32603, httpStatus: 503, connectCode: Code.Unavailable, zktCode: "UPSTREAM_UNAVAILABLE" },
  not_found: { jsonRpcCode: -32601, httpStatus: 404, connectCode: Code.NotFound, zktCode: "NOT_FOUND" },
  // What was asked cannot be done in the thing's present state (cancel a mined write, cordon the last node).
  conflict: { jsonRpcCode: -32000, httpStatus: 409, connectCode: Code.FailedPrecondition, zktCode: "CONFLICT" },
  idempotency_mismatch: { wholeRequest: true, jsonRpcCode: -32602, httpStatus: 422, connectCode: Code.FailedPrecondition, zktCode: "VALIDATION_ERROR" },
  idempotency_in_progress: { wholeRequest: true, jsonRpcCode: -32603, httpStatus: 409, connectCode: Code.Aborted, zktCode: "VALIDATION_ERROR" },
  // The client went away mid-request (its body cut short): nobody reads the answer; 499 as nginx logs it.
  client_gone: { wholeRequest: true, jsonRpcCode: -32600, httpStatus: 499, connectCode: Code.Canceled, zktCode: "CLIENT_CLOSED" },
};

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface GatewayErrorOptions {
  /** Machine-readable extra facts (JSON-RPC `data`, ZKT `details`). Never secrets. */
  details?: JsonValue;
  /** Overrides the kind's JSON-RPC code, e.g. an upstream's own execution-error code. */
  jsonRpcCode?: number;
  /** Seconds a rate-limited caller should wait. */
  retryAfterSeconds?: number;
  cause?: unknown;
  /** A first request's error replayed to a retry with the same idempotency key. */
  replayed?: boolean;
}

export class GatewayError extends Error {
  override readonly name = "GatewayError";
  readonly details: JsonValue | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly replayed: boolean;
  private readonly codeOverride: number | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.details = options.details;
    this.codeOverride = options.jsonRpcCode;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.replayed = options.replayed ?? false;
  }

  get jsonRpcCode(): number {
    return this.codeOverride ?? errorKinds[this.kind].jsonRpcCode;
  }
  get httpStatus(): number {
    return errorKinds[this.kind].httpStatus;
  }
  get connectCode(): Code {
    return errorKinds[this.kind].connectCode;
  }
  get zktCode(): string {
    return errorKinds[this.kind].zktCode;
  }
}

/** True when `err` refuses a whole request (see KindInfo.wholeRequest). */
export function failsWholeRequest(err: GatewayError): boolean {
  return errorKinds[err.kind].wholeRequest === true;
}

/**
 * Anything thrown that is not a GatewayError becomes an internal error whose message hides details, except a
 * stack overflow: nothing here recurses deeply but over a caller's JSON (params nested 100,000 deep), so that
 * is the caller's request, refused as such (-32600, 400), not a fault of ours (-32603, 500).
 */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof RangeError && /call stack/i.test(err.message))
    return new GatewayError("invalid_request", "Invalid request: the JSON is nested too deeply to process", { cause: err });
  return new GatewayError("internal", "internal error", { cause: err });
}

/** An error object an upstream node returned: keeps the node's code, message and data for JSON-RPC clients. */
export function fromUpstreamError(code: number, message: string, data: JsonValue | undefined): GatewayError {
  const kind: ErrorKind =
    code === -32602
      ? "invalid_params"
      : code === -32601
        ? "method_not_found"
        : code === -32600
          ? "invalid_request"
          : code === 3 || /revert/i.test(message)
            ? "execution_reverted"
            : code === -32001 || (code === -32000 && NODE_NOT_FOUND.test(message))
              ? "not_found"
              : "transaction_rejected";
  // A node's -32001 ("Resource not found", EIP-1474) would read as ours, "unknown or revoked API key": it is
  // answered as -32000, geth's code for the same ("filter not found", "header not found").
  return new GatewayError(kind, message, { jsonRpcCode: code === -32001 ? -32000 : code, details: data });
}

/** A node's -32000 that says what was asked for does not exist (a filter, a block): Connect's not_found. */
const NODE_NOT_FOUND = /\bnot found\b|unknown block|no such/i;
