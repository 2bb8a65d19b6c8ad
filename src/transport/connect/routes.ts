// Connect routes of one network: the guarded handlers, served over Connect, gRPC and gRPC-Web.
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";

export interface Handlers {
  rpc: ServiceImpl<typeof RpcService>;
  zkt: ServiceImpl<typeof ZktService>;
}

export function connectRoutes(handlers: Handlers): (router: ConnectRouter) => void {
  return (router) => {
    router.service(RpcService, handlers.rpc);
    router.service(ZktService, handlers.zkt);
  };
}
