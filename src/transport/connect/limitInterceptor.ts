// Rate limits for Connect/gRPC callers: the same limits as JSON-RPC and ZKT REST (a Batch of n counts n,
// public ZKT counts against try-it-out); X-RateLimit-* headers. ZKT writes are charged to the key's daily
// quota by the ZKT service itself, so a replayed idempotent write sends and costs nothing (as over REST).
import type { Interceptor } from "@connectrpc/connect";
import { ZktService } from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { RpcService, type BatchRequest } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { RateLimits } from "../../limits/rateLimits.js";
import { rateLimitHeaders } from "../../limits/rateLimits.js";
import { accessKey, clientIpKey } from "./context.js";

export function limitInterceptor(limits: RateLimits, network: string): Interceptor {
  return (next) => async (req) => {
    const access = req.contextValues.get(accessKey);
    const ip = req.contextValues.get(clientIpKey);
    const weight = req.service.typeName === RpcService.typeName && req.method.name === "Batch" && !req.stream ? Math.max(1, (req.message as BatchRequest).calls.length) : 1;
    const decision = await limits.checkRequests(network, access, ip, weight);
    if (req.service.typeName === ZktService.typeName && access.kind === "public") await limits.checkTryItOut(network, ip);
    const res = await next(req);
    for (const [k, v] of Object.entries(rateLimitHeaders(decision))) res.header.set(k, v);
    return res;
  };
}
