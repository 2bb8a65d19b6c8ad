// What a health probe asks a node, in one round trip, and what its answers say: is it on this chain (chain
// id and genesis: a node restarted on a new chain keeps its chain id), where is its head, is it syncing.
import { isReply, type UpstreamReply } from "./upstreamReplies.js";

export const PROBE_CALLS = [
  { jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] },
  { jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x0", false] },
  { jsonrpc: "2.0", id: 2, method: "eth_blockNumber", params: [] },
  { jsonrpc: "2.0", id: 3, method: "eth_syncing", params: [] },
];
export const PROBE_BATCH = JSON.stringify(PROBE_CALLS);

export interface ProbeReading {
  /** Why the node is on another chain, if it is. */
  wrongChain?: string;
  /** Its head (0x hex), if it said. */
  head?: string;
  syncing: boolean;
}

/** The probe's replies (any order), against the chain id (0x hex) and, once known, the genesis hash. */
export function readProbe(replies: unknown[], expectedChainId: string, genesisHash: string | undefined): ProbeReading {
  const byId = new Map<unknown, UpstreamReply>();
  for (const r of replies) if (isReply(r)) byId.set(r.id, r);
  const chainId = byId.get(0)?.result;
  const genesis = byId.get(1)?.result as { hash?: string } | null | undefined;
  if (chainId !== expectedChainId) return { wrongChain: `reports chain id ${JSON.stringify(chainId)}, expected ${expectedChainId}`, syncing: false };
  if (genesisHash !== undefined && genesis?.hash !== genesisHash)
    return { wrongChain: `has genesis ${String(genesis?.hash)}, expected ${genesisHash}: another chain`, syncing: false };
  const head = byId.get(2)?.result;
  // A node without eth_syncing (an error, no result) is taken as not syncing.
  const syncing = byId.get(3)?.result;
  return { ...(typeof head === "string" ? { head } : {}), syncing: syncing !== undefined && syncing !== null && syncing !== false };
}
