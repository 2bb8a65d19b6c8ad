// GatewayError → ConnectError, once for Connect, gRPC and gRPC-Web. The JSON-RPC code, message and data
// travel as an RpcError detail so gRPC clients see exactly what JSON-RPC clients see.
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { type GatewayError, toGatewayError } from "../../errors.js";
import { RpcErrorSchema } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { toRpcError } from "../../handlers/rpcError.js";
import { callerContext, inSpan, SpanKind, tracingOn } from "../../trace/tracing.js";

export function toConnectError(err: GatewayError): ConnectError {
  const headers: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined) headers["retry-after"] = String(err.retryAfterSeconds);
  return new ConnectError(err.message, err.connectCode, headers, [{ desc: RpcErrorSchema, value: toRpcError(err) }]);
}

export const asConnectError = (err: unknown): ConnectError => (err instanceof ConnectError ? err : toConnectError(toGatewayError(err)));

/** A stream's messages, with whatever its handler throws while streaming mapped the same way. */
async function* mappedStream<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw asConnectError(err);
  }
}

/** Maps whatever a handler throws, before its answer or (a stream) during it; the framework's own ConnectErrors pass through. */
export const errorMappingInterceptor: Interceptor = (next) => async (req) => {
  // Traced, a Connect/gRPC call is a server span continuing its caller's traceparent metadata.
  if (tracingOn)
    return inSpan(
      req.url.slice(req.url.lastIndexOf("/", req.url.lastIndexOf("/") - 1)),
      SpanKind.SERVER,
      () => mapped(next, req),
      callerContext(Object.fromEntries(req.header)),
      {
        "rpc.system": req.header.get("content-type")?.startsWith("application/grpc") ? "grpc" : "connect_rpc",
        "rpc.service": req.service.typeName,
        "rpc.method": req.method.name,
      },
    );
  return mapped(next, req);
};

async function mapped(next: Parameters<Interceptor>[0], req: Parameters<ReturnType<Interceptor>>[0]): ReturnType<ReturnType<Interceptor>> {
  try {
    const res = await next(req);
    return res.stream ? { ...res, message: mappedStream(res.message) } : res;
  } catch (err) {
    throw asConnectError(err);
  }
}
