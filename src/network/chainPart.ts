// The chain behind a network: its upstream nodes (or the embedded anvil when none is configured), the pool
// that routes to them, and the chain's identity (genesis) the journal is keyed by.
import { join } from "node:path";
import { startEmbeddedNode, type EmbeddedNode } from "../chain/embeddedNode.js";
import { chainGenesis } from "../chain/chainGenesis.js";
import { UpstreamPool } from "../chain/upstreamPool.js";
import type { FeeMode } from "../config/config.js";
import { detectFeeMode } from "../chain/feeRegime.js";
import type { NetworkContext } from "./networkContext.js";

/** The gateway's own dev chain charges nothing unless told to (Stability's networks are zero-fee). */
const embeddedFeeMode = (configured: FeeMode | "auto"): FeeMode => (configured === "auto" ? "zero" : configured);

export interface ChainPart {
  embedded: EmbeddedNode | undefined;
  upstreamUrls: string[];
  pool: UpstreamPool;
  genesisHash: string;
  /** The journal's network key: a fresh embedded anvil is a new chain, its old journal not replayed onto it. */
  journalNetwork: string;
  /** The fee mode run with: FEE_MODE, auto resolved from the node (the embedded anvil's is zero unless set). */
  feeMode: FeeMode;
}

export async function startChain({ gw, net, deps, log, stack }: NetworkContext): Promise<ChainPart> {
  const embedded = net.upstreams.length === 0 ? await startEmbedded({ gw, net, deps, log, stack }) : undefined;
  const upstreamUrls = embedded ? [embedded.url] : net.upstreams;
  const m = deps.metrics;
  const pool = new UpstreamPool({
    observer: {
      latency: (upstream, seconds) => m.observeUpstream(net.name, upstream, seconds),
      health: (upstream, healthy) => m.upstreamHealthy.set({ network: net.name, upstream }, healthy ? 1 : 0),
      routing: (upstream, f) => {
        m.upstreamLag.set({ network: net.name, upstream }, f.lag);
        m.upstreamScore.set({ network: net.name, upstream }, f.score);
        m.upstreamCircuitOpen.set({ network: net.name, upstream }, f.open ? 1 : 0);
        m.upstreamWritesPaused.set({ network: net.name, upstream }, f.writesPaused ? 1 : 0);
      },
      droppedWrite: (upstream, paused) => {
        m.upstreamDroppedWrites.inc({ network: net.name, upstream });
        if (paused) m.upstreamWritesPaused.set({ network: net.name, upstream }, 1);
      },
      hedge: (won) => m.upstreamHedges.inc({ network: net.name, outcome: won ? "won" : "lost" }),
      heightWait: (reached) => m.upstreamHeightWaits.inc({ network: net.name, outcome: reached ? "reached" : "unreached" }),
      integrity: (check, corrected) => m.upstreamIntegrity.inc({ network: net.name, check, outcome: corrected ? "corrected" : "unresolved" }),
    },
    routing: net.routing,
    methodPolicies: gw.methodPolicies,
    urls: upstreamUrls,
    chainId: net.chainId,
    timeoutMs: gw.upstreamTimeoutMs,
    maxAnswerBytes: gw.upstreamMaxAnswerBytes,
    probeIntervalMs: gw.upstreamProbeIntervalMs,
    probeTimeoutMs: gw.upstreamProbeTimeoutMs,
    batchReads: gw.batchUpstreamReads,
    log,
  });
  stack.defer(() => pool.stop());
  deps.onReload?.((next) => pool.setMethodPolicies(next.methodPolicies));
  // The configuration's cordoned nodes, and a reloaded configuration's upstreams and cordons (ConfigReloader
  // refuses a change for a network on its embedded node).
  if (!embedded) {
    const cordon = (now: readonly string[], before: readonly string[], upstreams: readonly string[] = net.upstreams) => {
      // (A node removed from the list is being let go, cordoned: it is not put back.)
      for (const url of before) if (!now.includes(url) && upstreams.includes(url)) pool.cordon(url, false);
      for (const url of now) if (!before.includes(url)) pool.cordon(url, true);
    };
    let cordoned = net.cordoned;
    cordon(cordoned, []);
    pool.setWeights(Object.fromEntries(net.weights.map((w) => [w.url, w.weight])));
    deps.onReload?.((next, changed) => {
      const n = next.networks[net.name]!;
      if (changed.includes(`networks.${net.name}.upstreams`)) pool.setUpstreams(n.upstreams);
      if (changed.includes(`networks.${net.name}.weights`) || changed.includes(`networks.${net.name}.upstreams`))
        pool.setWeights(Object.fromEntries(n.weights.map((w) => [w.url, w.weight])));
      if (changed.includes(`networks.${net.name}.cordoned`)) cordon(n.cordoned, cordoned, n.upstreams);
      cordoned = n.cordoned;
    });
  }
  // Pinned before the first probe, so a node on another genesis is out from the start (chainGenesis.ts).
  const pinned = embedded ? undefined : await deps.store.pinnedGenesis(net.name);
  const pinnedGenesis = embedded ? undefined : (net.genesis ?? pinned);
  if (pinnedGenesis) pool.expectGenesis(pinnedGenesis);
  await pool.start();
  if (!pool.ready) log.warn("no upstream is reachable yet; serving anyway, readiness is false", { upstreams: pool.health() });
  const genesisHash = await chainGenesis({
    pool,
    store: deps.store,
    network: net.name,
    pinned,
    configured: net.genesis,
    ownChain: embedded !== undefined,
    continued: embedded?.continued ?? false,
    log,
  });
  // From now on an upstream on another genesis (a node restarted on a fresh chain) is out of service. Not the
  // gateway's own node: it is this chain whatever block 0 it reports after loading its state (chainGenesis.ts).
  if (!embedded) pool.expectGenesis(genesisHash);
  const feeMode = embedded ? embeddedFeeMode(net.feeMode) : await detectFeeMode(pool, net.feeMode, log);
  return { embedded, upstreamUrls, pool, genesisHash, journalNetwork: `${net.name}:${genesisHash.slice(0, 18)}`, feeMode };
}

async function startEmbedded({ gw, net, log, stack }: NetworkContext): Promise<EmbeddedNode> {
  const embedded = await startEmbeddedNode({
    chainId: net.chainId,
    blockTimeSeconds: net.blockTimeSeconds,
    feeMode: embeddedFeeMode(net.feeMode),
    ...(net.embeddedNodePort ? { port: net.embeddedNodePort } : {}),
    // The dev chain survives restarts (contracts, balances, queueIds); delete the file for a fresh one.
    ...(gw.embeddedState ? { stateFile: join(gw.dataDir, `chain-${net.name}.json`) } : {}),
    onStateRestored: ({ restored, tornAside }) =>
      log.error(
        restored === "copy"
          ? "the dev chain's state file was torn (a crash while anvil wrote it): started on its last whole copy, a few seconds older"
          : "the dev chain's state file was torn (a crash while anvil wrote it) and no whole copy exists: started a new chain",
        { tornAside },
      ),
    onCopyFailed: (err) => log.warn("could not keep a whole copy of the dev chain's state", { error: err.message }),
  });
  stack.defer(() => embedded.stop());
  log.info("embedded anvil started", { chainId: net.chainId, blockTime: net.blockTimeSeconds, pid: embedded.pid });
  return embedded;
}
