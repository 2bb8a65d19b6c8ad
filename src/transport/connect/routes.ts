// Connect routes of one network: every service registered in one place.
import type { ConnectRouter } from "@connectrpc/connect";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { RpcCore } from "../../rpc/rpcCore.js";
import { rpcServiceImpl } from "./rpcService.js";

export interface ConnectServices {
  core: RpcCore;
  maxBatchSize: number;
}

export function connectRoutes(services: ConnectServices): (router: ConnectRouter) => void {
  return (router) => {
    router.service(RpcService, rpcServiceImpl(services.core, services.maxBatchSize));
  };
}
