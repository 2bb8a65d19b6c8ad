// A network's guarded handlers: one policy for every transport (policy/operations.ts), applied around the
// handlers by the guard; Connect serves them, and the REST, JSON-RPC and WebSocket adapters call them in process.
import { AdminService } from "../../gen/chaingateway/admin/v1/admin_pb.js";
import { type BatchRequest, type CallRequest, RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { WebhookService } from "../../gen/chaingateway/webhooks/v1/webhooks_pb.js";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import { adminHandlers } from "../handlers/adminHandlers.js";
import { admitEach, guard } from "../handlers/guard.js";
import { rpcHandlers } from "../handlers/rpcHandlers.js";
import { webhookHandlers } from "../handlers/webhookHandlers.js";
import { zktHandlers } from "../handlers/zktHandlers.js";
import { MethodWeights } from "../limits/methodWeights.js";
import type { SubscriptionHub } from "../live/subscriptions.js";
import { TestFaucet } from "../platform/testFaucet.js";
import type { Sponsorship } from "../platform/sponsorship.js";
import { Policy } from "../policy/policy.js";
import type { RpcCore } from "../rpc/rpcCore.js";
import type { Sequencer } from "../sequencer/sequencer.js";
import type { WebhookRegistry } from "../webhooks/webhookRegistry.js";
import type { WriteCallbacks } from "../webhooks/writeCallbacks.js";
import type { ZktCore } from "../zkt/zktCore.js";
import type { NetworkContext } from "./networkContext.js";

export interface HandlerParts {
  core: RpcCore;
  zkt: ZktCore;
  pool: UpstreamPool;
  sequencer: Sequencer;
  sponsorship: Sponsorship;
  hub: SubscriptionHub;
  registry: WebhookRegistry;
  callbacks: WriteCallbacks;
  /** The embedded dev chain (a test faucet is offered). */
  devChain: boolean;
}

export type GuardedHandlers = ReturnType<typeof guardedHandlers>["handlers"];

export function guardedHandlers({ gw, net, deps, log }: NetworkContext, p: HandlerParts) {
  const limits = deps.limits;
  const weights = new MethodWeights(gw.methodWeights);
  deps.onReload?.((next) => weights.replace(next.methodWeights));
  const policy = new Policy({ network: net.name, authenticate: deps.authenticate, adminTokens: deps.adminTokens, limits, idempotency: deps.idempotency });
  const usageOf = (access: Parameters<typeof limits.usageOf>[1]) => limits.usageOf(net.name, access);
  const walletAddress = (access: { walletIndex: number }) => deps.wallets.signer(access.walletIndex).address;
  const handlers = {
    // A call counts its method's units (METHOD_WEIGHTS; 1 unless weighed), a batch the sum of its calls'.
    rpc: guard(
      RpcService,
      rpcHandlers(p.core, gw.maxBatchSize, p.sponsorship, p.hub, p.devChain ? new TestFaucet(p.pool) : undefined, usageOf),
      policy,
      (method, req) =>
        method === "Batch"
          ? weights.uniform
            ? Math.max(1, (req as BatchRequest).calls.length)
            : weights.sum((req as BatchRequest).calls.map((c) => c.method))
          : method === "Call"
            ? weights.of((req as CallRequest).method)
            : 1,
    ),
    zkt: guard(ZktService, zktHandlers(p.zkt, p.hub), policy),
    webhooks: guard(WebhookService, webhookHandlers(p.registry, net.name, walletAddress, p.callbacks), policy),
    admin: deps.adminTokens.enabled
      ? guard(
          AdminService,
          adminHandlers({
            network: net.name,
            keys: deps.keys,
            pool: p.pool,
            sequencer: p.sequencer,
            usageOf,
            stuckAfterMs: gw.stuckTransactionMs,
            log,
            rotateCallbackSecret: (keyId) => p.callbacks.rotate(keyId),
            ...(deps.reload ? { reload: deps.reload } : {}),
          }),
          policy,
        )
      : undefined,
    admitReflection: admitEach(policy, "ServerReflection.ServerReflectionInfo"),
  };
  return { policy, handlers };
}
