// The block a read needs its node to have: a number it names, or the gateway's head for `latest`/`pending`
// (a toBlock, a state read, a block by number). A node one block behind the rest — the usual state of a pool —
// answered such reads with null blocks and short log lists while the gateway's own eth_blockNumber already
// named that block; the pool sends them to a node known to have it (upstreamPool.ts). Pure.
import type { JsonValue } from "../errors.js";
import type { RpcCall } from "./upstreamReplies.js";

/** Where a method's block parameter sits. */
const BLOCK_PARAM: Record<string, number> = {
  eth_getBlockByNumber: 0,
  eth_getBlockTransactionCountByNumber: 0,
  eth_getTransactionByBlockNumberAndIndex: 0,
  eth_getUncleCountByBlockNumber: 0,
  eth_getUncleByBlockNumberAndIndex: 0,
  eth_getBlockReceipts: 0,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_call: 1,
  eth_estimateGas: 1,
  eth_createAccessList: 1,
  eth_feeHistory: 1,
  eth_getStorageAt: 2,
  eth_getProof: 2,
};

/** The block `call` needs its node to have, given the gateway's head; undefined when any node will do. */
export function blockNeeded(call: RpcCall, head: number): number | undefined {
  if (call.method === "eth_blockNumber") return head >= 0 ? head : undefined;
  if (call.method === "eth_getLogs") {
    const filter = call.params[0];
    if (filter === null || typeof filter !== "object" || Array.isArray(filter) || typeof filter.blockHash === "string") return undefined;
    return blockOf(filter.toBlock ?? "latest", head);
  }
  const at = BLOCK_PARAM[call.method];
  if (at === undefined) return undefined;
  // Omitted, a state read means latest (eth_call, eth_getBalance without a block).
  return blockOf(call.params[at] ?? (at > 0 ? "latest" : undefined), head);
}

function blockOf(tag: JsonValue | undefined, head: number): number | undefined {
  if (tag === "latest" || tag === "pending") return head >= 0 ? head : undefined;
  if (typeof tag === "string") return /^0x[0-9a-fA-F]{1,16}$/.test(tag) ? Number.parseInt(tag, 16) : undefined;
  // EIP-1898: { blockNumber } (a { blockHash } names no height).
  if (tag !== null && typeof tag === "object" && !Array.isArray(tag) && typeof tag.blockNumber === "string") return blockOf(tag.blockNumber, head);
  return undefined;
}
