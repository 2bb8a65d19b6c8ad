// One network's runtime, as a table of parts: its chain (upstreams or the embedded anvil), its JSON-RPC core,
// its writes, webhooks, ZKT and live side, the guarded handlers, and its edge on its own port. Each part is
// one file under network/ and pushes its own teardown; closing (or a failed start) unwinds them in reverse.
import type { GatewayConfig, NetworkConfig } from "./config/config.js";
import type { HeadFeed } from "./live/headFeed.js";
import type { SubscriptionHub } from "./live/subscriptions.js";
import type { UpstreamPool } from "./chain/upstreamPool.js";
import type { RpcCore } from "./rpc/rpcCore.js";
import type { Sequencer } from "./sequencer/sequencer.js";
import type { ZktCore } from "./zkt/zktCore.js";
import { startChain } from "./network/chainPart.js";
import { openEdge } from "./network/edgePart.js";
import { guardedHandlers } from "./network/handlersPart.js";
import { startLive } from "./network/livePart.js";
import type { NetworkContext, NetworkDeps } from "./network/networkContext.js";
import { startRpcCore } from "./network/rpcPart.js";
import { startWebhooks } from "./network/webhooksPart.js";
import { startWrites } from "./network/writesPart.js";
import { startZkt } from "./network/zktPart.js";

export type { NetworkDeps } from "./network/networkContext.js";

export interface RunningNetwork {
  config: NetworkConfig;
  /** Base address, e.g. http://127.0.0.1:8545 */
  url: string;
  /** The node(s) behind it; the embedded anvil's URL when there is one. */
  upstreamUrls: string[];
  embedded: boolean;
  /** The embedded anvil's watchdog process (anvil is its child), when there is one. */
  embeddedPid?: number;
  core: RpcCore;
  zkt: ZktCore;
  pool: UpstreamPool;
  sequencer: Sequencer;
  /** Live subscriptions (WebSocket, Connect streams), on the network's one head feed. */
  hub: SubscriptionHub;
  /** The one follower of the chain behind every subscription (polls only while someone listens). */
  feed: HeadFeed;
  close(): Promise<void>;
}

export async function startNetwork(gw: GatewayConfig, net: NetworkConfig, deps: NetworkDeps): Promise<RunningNetwork> {
  const stack = new AsyncDisposableStack();
  const ctx: NetworkContext = { gw, net, deps, log: deps.log.child({ network: net.name }), stack };
  try {
    const chain = await startChain(ctx);
    const { pool, embedded } = chain;
    const core = await startRpcCore(ctx, chain);
    const writes = await startWrites(ctx, chain, core);
    const hooks = startWebhooks(ctx, pool);
    const zkt = startZkt(ctx, chain, writes, hooks);
    const live = startLive(ctx, pool, core, writes.headsWs, hooks.wake);
    const { policy, handlers } = guardedHandlers(ctx, { core, zkt, pool, ...writes, ...live, ...hooks, devChain: embedded !== undefined });
    let draining = false;
    const url = await openEdge(ctx, { pool, policy, handlers, ...live, draining: () => draining });
    // First at close: readiness goes false, so balancers stop sending; then in-flight broadcasts finish.
    stack.defer(async () => {
      draining = true;
      await writes.sequencer.drain();
    });
    const { sequencer } = writes;
    const { hub, feed } = live;
    const running = {
      config: { ...net, feeMode: chain.feeMode },
      url,
      upstreamUrls: chain.upstreamUrls,
      embedded: embedded !== undefined,
      core,
      zkt,
      pool,
      sequencer,
      hub,
      feed,
    };
    return { ...running, ...(embedded ? { embeddedPid: embedded.pid } : {}), close: () => stack.disposeAsync() };
  } catch (err) {
    await stack.disposeAsync().catch(() => undefined);
    throw err;
  }
}
