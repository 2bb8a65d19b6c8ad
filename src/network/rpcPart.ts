// A network's JSON-RPC core: the node's answers through the immutable cache, counted per method, with the
// work one caller can put on the node bounded (gas cap, per-IP share).
import { NodeShares } from "../limits/nodeShares.js";
import { callGasCapOf } from "../rpc/callGasCapOf.js";
import { ImmutableCache } from "../rpc/immutableCache.js";
import { InflightReads } from "../rpc/inflightReads.js";
import { RpcCore } from "../rpc/rpcCore.js";
import { answerZeroFees } from "../rpc/zeroFees.js";
import type { ChainPart } from "./chainPart.js";
import type { NetworkContext } from "./networkContext.js";

export async function startRpcCore({ gw, net, deps, stack }: NetworkContext, { pool, feeMode }: Pick<ChainPart, "pool" | "feeMode">): Promise<RpcCore> {
  const m = deps.metrics;
  const durations = m.requestDurations(net.name);
  const cache = new ImmutableCache({ maxEntries: 10_000, confirmations: net.cacheConfirmations });
  pool.onHead = (head) => cache.observeHead(head);
  const core = new RpcCore(
    pool,
    net.chainId,
    (ctx) => deps.limits.checkTransaction(ctx.access),
    cache,
    (method, outcome, transport, seconds) => {
      // Unknown methods share one label: clients choose method names, the label set must stay bounded.
      const label = outcome.ok || outcome.error.kind !== "method_not_found" ? method : "other";
      m.countRpc(net.name, label, outcome.ok ? "ok" : String(outcome.error.jsonRpcCode));
      durations(transport, label, seconds);
    },
    gw.coalesceReads ? new InflightReads() : undefined,
  );
  if (feeMode === "zero") answerZeroFees(core, pool);
  const nodeShares = new NodeShares({
    perCaller: gw.nodeSharePerCaller,
    queuePerCaller: gw.nodeQueuePerCaller,
    refused: () => m.nodeShareRefusals.inc({ network: net.name }),
  });
  stack.defer(() => nodeShares.stop());
  core.boundNodeWork(await callGasCapOf(net, pool), nodeShares);
  return core;
}
