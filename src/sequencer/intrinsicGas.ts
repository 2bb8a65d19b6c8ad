// The gas a call to an address without code needs: its intrinsic cost, nothing executes. Computed here
// instead of asking the node (eth_estimateGas simulates the transaction: a round trip and node CPU per write).
import { ZeroAddress } from "ethers";

const TX_BASE = 21_000n;

/**
 * Intrinsic gas of a plain call carrying `data` (0x hex): the larger of the standard calldata cost
 * (4 per zero byte, 16 per other byte) and the EIP-7623 floor (10 per token; a zero byte is one token, any
 * other byte four), so the limit is enough before and after Prague.
 */
export function intrinsicGas(data: string): bigint {
  let zero = 0n;
  let other = 0n;
  for (let i = 2; i < data.length; i += 2) {
    if (data.charCodeAt(i) === 0x30 && data.charCodeAt(i + 1) === 0x30) zero++;
    else other++;
  }
  const standard = TX_BASE + 4n * zero + 16n * other;
  const floor = TX_BASE + 10n * (zero + 4n * other);
  return standard > floor ? standard : floor;
}

/** Most calldata we price locally; larger messages are estimated by the node, which checks them against its limits. */
const MAX_LOCAL_DATA_BYTES = 32 * 1024;

/**
 * The gas limit of a call to `to` priced without the node, or undefined when the node must estimate it.
 * Only the zero address qualifies: it has no code and nobody holds its key, so (unlike any other account,
 * which EIP-7702 can give code at any time) a call to it can never execute anything.
 */
export function localGasLimit(to: string | null, data: string): bigint | undefined {
  if (to === null || to.toLowerCase() !== ZeroAddress || (data.length - 2) / 2 > MAX_LOCAL_DATA_BYTES) return undefined;
  return intrinsicGas(data);
}
