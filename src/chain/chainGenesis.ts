// Which chain a network's journal is for: its genesis hash, pinned in the store the first time it is seen.
// A start while no node answers journals under the pinned genesis, so the queueIds of earlier writes answer
// and their unfinished writes go out once a node is back (it once journaled under "unknown": every earlier
// queueId 404, every unfinished write stranded). A node on another genesis is never taken for this chain.
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
  log: Logger;
}

/** The network's genesis hash: the node's when it is the gateway's own chain or none is pinned, else the pinned one. */
export async function chainGenesis(d: ChainGenesisDeps): Promise<string> {
  const ask = async (): Promise<string> => {
    const block = (await d.pool.call("eth_getBlockByNumber", ["0x0", false])) as { hash?: unknown } | null;
    if (typeof block?.hash !== "string") throw new Error("the node has no genesis block to show");
    return block.hash;
  };
  if (d.pinned !== undefined && !d.ownChain) {
    const seen = await ask().catch(() => undefined);
    if (seen === undefined) d.log.warn("no node of this chain answers yet: journaling under the pinned genesis", { genesis: d.pinned });
    return d.pinned;
  }
  // Nothing pinned (a first start), or the gateway's own node: the node must say. A first start waits for one.
  const seen = await pRetry(ask, {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: 500,
    maxTimeout: 5_000,
    onFailedAttempt: ({ error, attemptNumber }) =>
      d.log.warn("waiting for a node to learn the chain's genesis (nothing is pinned yet)", { attempt: attemptNumber, error: error.message }),
  });
  if (seen !== d.pinned) {
    if (d.pinned !== undefined) d.log.warn("the embedded chain is a new one: its genesis is pinned in place of the old", { old: d.pinned, genesis: seen });
    await d.store.pinGenesis(d.network, seen);
  }
  return seen;
}
