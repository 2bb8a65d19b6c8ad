// GatewayError → ConnectError, once for Connect, gRPC and gRPC-Web. The JSON-RPC code, message and data
// travel as an RpcError detail so gRPC clients see exactly what JSON-RPC clients see.
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { GatewayError, toGatewayError } from "../../errors.js";
import { RpcErrorSchema, type RpcError } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";

/** The JSON-RPC error object as a protobuf RpcError (error details and Batch items). */
export function toRpcError(err: GatewayError): RpcError {
  return create(RpcErrorSchema, { code: err.jsonRpcCode, message: err.message, ...(err.details === undefined ? {} : { data: fromJson(ValueSchema, err.details) }) });
}

export function toConnectError(err: GatewayError): ConnectError {
  const headers: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined) headers["retry-after"] = String(err.retryAfterSeconds);
  return new ConnectError(err.message, err.connectCode, headers, [{ desc: RpcErrorSchema, value: toRpcError(err) }]);
}

/** Maps whatever a handler throws; ConnectErrors raised by the framework itself pass through. */
export const errorMappingInterceptor: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    throw toConnectError(toGatewayError(err));
  }
};
