// GatewayError → ConnectError, once for Connect, gRPC and gRPC-Web. The JSON-RPC code, message and data
// travel as an RpcError detail so gRPC clients see exactly what JSON-RPC clients see.
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { GatewayError, toGatewayError } from "../../errors.js";
import { RpcErrorSchema } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { toRpcError } from "../../handlers/rpcError.js";

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
