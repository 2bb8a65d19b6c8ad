// Which chain a network's journal is for: its genesis hash, pinned in the store the first time it is seen.
// A start while no node answers journals under the pinned genesis, so the queueIds of earlier writes answer
// and their unfinished writes go out once a node is back (journaled under "unknown", every earlier queueId
// would 404 and every unfinished write be stranded). A node on another genesis is never taken for this chain. The
// embedded node is the gateway's own chain: its genesis is kept apart from the pin, for as long as its state
// file goes on. An operator may name the genesis in config.
import pRetry from "p-retry";
import type { Logger } from "../log/logger.js";
import type { SubmissionStore } from "../store/submissionStore.js";
import type { UpstreamPool } from "./upstreamPool.js";

export interface ChainGenesisDeps {
  pool: Pick<UpstreamPool, "call">;
  store: Pick<SubmissionStore, "pinnedGenesis" | "pinGenesis">;
  network: string;
  /** The genesis pinned before (read before the pool started, so its first probe already checks it). */
  pinned: string | undefined;
  /** The gateway started this chain itself (the embedded node): what it reports is the chain, even a new one. */
  ownChain: boolean;
  /** Its own chain went on from its state file: the same chain as at the last start. */
  continued?: boolean;
  /** The operator's word (networks.<name>.genesis): pinned in place of what was, e.g. after a chain reset. */
  configured?: string | undefined;
  log: Logger;
}

/** The network's genesis hash: the node's when it is the gateway's own chain or none is pinned, else the pinned one. */
export async function chainGenesis(d: ChainGenesisDeps): Promise<string> {
  const ask = async (): Promise<string> => {
    const block = (await d.pool.call("eth_getBlockByNumber", ["0x0", false])) as { hash?: unknown } | null;
    if (typeof block?.hash !== "string") throw new Error("the node has no genesis block to show");
    return block.hash;
  };
  if (d.configured !== undefined && !d.ownChain) {
    if (d.configured !== d.pinned) {
      d.log.warn("the configured genesis is pinned in place of the journal's", { old: d.pinned ?? null, genesis: d.configured });
      await d.store.pinGenesis(d.network, d.configured);
    }
    return d.configured;
  }
  if (d.pinned !== undefined && !d.ownChain) {
    const seen = await ask().catch(() => undefined);
    if (seen === undefined) d.log.warn("no node of this chain answers yet: journaling under the pinned genesis", { genesis: d.pinned });
    else if (seen !== d.pinned)
      d.log.error(
        "the node reports another genesis than the one this network's journal is pinned to: it is not used. If the chain was reset on purpose, set networks.<name>.genesis (TESTNET_GENESIS / MAINNET_GENESIS) to its genesis hash",
        { pinned: d.pinned, node: seen },
      );
    return d.pinned;
  }
  // The gateway's own node is the chain, and is always there at start. Its genesis is kept under a key of its
  // own (a later start in front of real nodes is not bound by a dev chain's genesis), and a chain that went on
  // from its state file keeps it: anvil loaded from a dump made after a load of its own can report another
  // block 0 (the dump holds the genesis it made at that start beside the first), every other restart, and the
  // journal keyed by that was keyed anew (every earlier queueId 404).
  if (d.ownChain) {
    const kept = d.continued ? await d.store.pinnedGenesis(ownChainKey(d.network)) : undefined;
    if (kept !== undefined) return kept;
    const seen = await ask();
    await d.store.pinGenesis(ownChainKey(d.network), seen);
    return seen;
  }
  // Nothing pinned: a first start, which waits for a node to say.
  const seen = await pRetry(ask, {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: 500,
    maxTimeout: 5_000,
    onFailedAttempt: ({ error, attemptNumber }) =>
      d.log.warn("waiting for a node to learn the chain's genesis (nothing is pinned yet)", { attempt: attemptNumber, error: error.message }),
  });
  await d.store.pinGenesis(d.network, seen);
  return seen;
}

/** Where the embedded chain's genesis is kept, apart from the pin real nodes are held to. */
const ownChainKey = (network: string): string => `embedded:${network}`;
