// Connect routes of one network: every service registered in one place.
import type { ConnectRouter } from "@connectrpc/connect";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";
import type { RpcCore } from "../../rpc/rpcCore.js";
import type { ZktCore } from "../../zkt/zktCore.js";
import { rpcServiceImpl } from "./rpcService.js";
import { zktServiceImpl } from "./zktService.js";
import type { Sponsorship } from "../../platform/sponsorship.js";
import type { IdempotencyStore } from "../../store/idempotencyStore.js";
import type { Access } from "../../rpc/methodPolicy.js";

export interface ConnectServices {
  core: RpcCore;
  sponsorship: Sponsorship;
  zkt: ZktCore;
  maxBatchSize: number;
  idempotency: IdempotencyStore;
  /** Names this network in idempotency scopes. */
  network: string;
  /** Charges one transaction to the caller's daily quota. */
  chargeTransaction(access: Access): Promise<void>;
}

export function connectRoutes(services: ConnectServices): (router: ConnectRouter) => void {
  return (router) => {
    router.service(RpcService, rpcServiceImpl(services.core, services.maxBatchSize, services.sponsorship));
    router.service(ZktService, zktServiceImpl(services.zkt, services));
  };
}
