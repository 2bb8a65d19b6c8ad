// A network's call gas cap: configured, else the node's block gas limit or geth's 50 M, whichever is lower.
import type { NetworkConfig } from "../config/config.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import { DEFAULT_CALL_GAS_CAP } from "./callGasCap.js";

export async function callGasCapOf(net: NetworkConfig, pool: UpstreamPool): Promise<bigint> {
  if (net.callGasCap !== undefined) return BigInt(net.callGasCap);
  try {
    const block = (await pool.call("eth_getBlockByNumber", ["latest", false])) as { gasLimit?: unknown } | null;
    const limit = typeof block?.gasLimit === "string" && /^0x[0-9a-fA-F]+$/.test(block.gasLimit) ? BigInt(block.gasLimit) : undefined;
    return limit !== undefined && limit > 0n && limit < DEFAULT_CALL_GAS_CAP ? limit : DEFAULT_CALL_GAS_CAP;
  } catch {
    // No node answers yet: the default bounds calls until a restart reads the chain's own limit.
    return DEFAULT_CALL_GAS_CAP;
  }
}
