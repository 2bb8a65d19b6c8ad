// Connect routes of one network: the guarded handlers, served over Connect, gRPC and gRPC-Web, and gRPC
// server reflection (v1, v1alpha) describing them.
import type { ConnectRouter, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MaybePromise } from "../../maybePromise.js";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { ServerReflection as ReflectionV1 } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { reflectionHandlers } from "../../handlers/reflection.js";
import { AdminService } from "../../../gen/chaingateway/admin/v1/admin_pb.js";
import { WebhookService } from "../../../gen/chaingateway/webhooks/v1/webhooks_pb.js";

export interface Handlers {
  rpc: ServiceImpl<typeof RpcService>;
  zkt: ServiceImpl<typeof ZktService>;
  webhooks: ServiceImpl<typeof WebhookService>;
  /** The admin API, when ADMIN_TOKEN is set (otherwise its paths are no endpoint: 404). */
  admin?: ServiceImpl<typeof AdminService> | undefined;
  /** Admits one gRPC reflection message (the policy's ServerReflection entry). */
  admitReflection: (ctx: HandlerContext) => MaybePromise<unknown>;
}

export function connectRoutes(handlers: Handlers): (router: ConnectRouter) => void {
  return (router) => {
    router.service(RpcService, handlers.rpc);
    router.service(ZktService, handlers.zkt);
    router.service(WebhookService, handlers.webhooks);
    if (handlers.admin) router.service(AdminService, handlers.admin);
    const services = [RpcService, ZktService, WebhookService];
    const reflection = reflectionHandlers(handlers.admin ? [...services, AdminService] : services, handlers.admitReflection);
    router.service(ReflectionV1, reflection.v1);
    router.service(ReflectionV1alpha, reflection.v1alpha);
  };
}
