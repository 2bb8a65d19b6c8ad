// A network's writes: the sequencer (journal, nonce lanes, broadcast), keyed raw transactions through it, and
// the platform methods and dev-chain extras that send or sponsor transactions.
import type { EmbeddedNode } from "../chain/embeddedNode.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import { upstreamHeads } from "../live/upstreamHeads.js";
import { installMulticall3 } from "../platform/multicall3.js";
import { registerPlatformMethods } from "../platform/platformMethods.js";
import { Sponsorship } from "../platform/sponsorship.js";
import { SupportedTokens } from "../platform/supportedTokens.js";
import { Validators } from "../platform/validators.js";
import { ethSendRawTransaction } from "../rpc/methods/ethSendRawTransaction.js";
import type { RpcCore } from "../rpc/rpcCore.js";
import { Sequencer } from "../sequencer/sequencer.js";
import type { ChainPart } from "./chainPart.js";
import type { NetworkContext } from "./networkContext.js";

/** anvil's first dev account, made the embedded chain's block proposer (its coinbase). */
const DEV_VALIDATOR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

export interface WritesPart {
  sequencer: Sequencer;
  sponsorship: Sponsorship;
  /** The node's new-heads WebSocket, when there is one (the embedded anvil's, or headsWebSocket). */
  headsWs: string | undefined;
}

export async function startWrites(ctx: NetworkContext, chain: ChainPart, core: RpcCore): Promise<WritesPart> {
  const { gw, net, deps, log, stack } = ctx;
  const { pool, embedded, genesisHash } = chain;
  const m = deps.metrics;
  const headsWs = net.headsWebSocket ?? (embedded ? embedded.url.replace(/^http/, "ws") : undefined);
  const sequencer = new Sequencer({
    network: chain.journalNetwork,
    chainId: net.chainId,
    feeMode: chain.feeMode,
    pool,
    store: deps.store,
    log,
    receiptPollMs: Math.max(50, Math.round((net.blockTimeSeconds * 1000) / 2)),
    confirmations: net.cacheConfirmations,
    ...(embedded ? {} : { genesisHash }),
    devFunding: embedded !== undefined && chain.feeMode === "market",
    creditFeeDust: embedded !== undefined && chain.feeMode === "zero",
    stuckAfterMs: gw.stuckTransactionMs,
    broadcastRetry: gw.resilience.broadcast,
    feeBumpWaitMs: gw.resilience.feeBumpWaitMs,
    droppedAfterMs: gw.droppedSendMs,
    maxIdleLanes: gw.maxIdleLanes,
    observer: {
      queueDepth: (n) => m.sequencerQueueDepth.set({ network: net.name }, n),
      retry: () => m.broadcastRetries.inc({ network: net.name }),
      stuckLanes: (n) => m.stuckLanes.set({ network: net.name }, n),
      reopened: (n) => m.writesReopened.inc({ network: net.name }, n),
    },
    walletFor: deps.walletByAddress,
    ...(headsWs
      ? {
          headWakeups: upstreamHeads(
            headsWs,
            (err) => log.debug("the node's heads WebSocket failed; the follower polls", { error: err.message }),
            gw.resilience.nodeHeadsReconnect,
          ),
        }
      : {}),
  });
  stack.defer(() => sequencer.stop());
  // The follower watches the probes' heads too, for a node going back.
  const cacheHead = pool.onHead;
  pool.onHead = (head) => {
    cacheHead?.(head);
    sequencer.follower.observeHead(head);
  };
  m.followSequencer(net.name, () => sequencer.stats());
  core.register("eth_sendRawTransaction", ethSendRawTransaction(sequencer));
  await sequencer.start();
  const sponsorship = await startPlatform(ctx, pool, embedded, core, sequencer);
  return { sequencer, sponsorship, headsWs };
}

async function startPlatform(
  { net, deps, log }: NetworkContext,
  pool: UpstreamPool,
  embedded: EmbeddedNode | undefined,
  core: RpcCore,
  sequencer: Sequencer,
): Promise<Sponsorship> {
  const validators = new Validators(pool, { config: net.validators, activeWindowBlocks: net.activeValidatorWindowBlocks });
  const tokens = new SupportedTokens(pool, log);
  await tokens.addConfigured(net.supportedTokens);
  if (embedded) {
    // A dev chain gets a real validator address and a real token out of the box.
    await pool.call("anvil_setCoinbase", [DEV_VALIDATOR]);
    await Promise.all([tokens.deployDemoToken(embedded.url, net.chainId), installMulticall3(embedded.url, net.chainId)]);
  }
  const sponsorship = new Sponsorship({ pool, sequencer, wallets: deps.wallets, chainId: net.chainId });
  registerPlatformMethods(core, { validators, tokens, sponsorship });
  return sponsorship;
}
