// Whether the node charges fees, asked at start: a gateway pointed at an ordinary EVM node (anvil with default
// fees, geth) kept answering eth_gasPrice 0x0 and signing zero-fee writes the node refused ("max fee per gas
// less than block base fee"). FEE_MODE auto (the default) follows the node — its latest base fee, or its gas
// price before London; an explicit zero against a node that charges refuses to start, with the reason.
import type { FeeMode } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import type { UpstreamPool } from "./upstreamPool.js";

export type ConfiguredFeeMode = FeeMode | "auto";

export interface NodeFees {
  gasPrice: bigint;
  baseFee: bigint | undefined;
}

/** The node's gas price and latest base fee (undefined before London). */
export async function nodeFees(pool: Pick<UpstreamPool, "call">): Promise<NodeFees> {
  const [price, block] = await Promise.all([pool.call("eth_gasPrice", []), pool.call("eth_getBlockByNumber", ["latest", false])]);
  const baseFee = (block as { baseFeePerGas?: string } | null)?.baseFeePerGas;
  return { gasPrice: BigInt(price as string), baseFee: baseFee === undefined ? undefined : BigInt(baseFee) };
}

/** The fee mode to run with, given the configured one and what the node says. */
export function feeModeFor(configured: ConfiguredFeeMode, fees: NodeFees): FeeMode {
  // The base fee decides where there is one: a zero-base-fee node (anvil --base-fee 0, a zero-fee chain) still
  // suggests a 1 gwei tip as its eth_gasPrice, yet takes writes that pay nothing. Before London, the price.
  const charges = fees.baseFee !== undefined ? fees.baseFee > 0n : fees.gasPrice > 0n;
  if (configured === "auto") return charges ? "market" : "zero";
  if (configured === "zero" && charges)
    throw new Error(
      `FEE_MODE is zero but the node charges fees (gas price ${fees.gasPrice}, base fee ${fees.baseFee ?? "none"}): ` +
        "every write would be refused; set FEE_MODE=market, or auto to follow the node",
    );
  return configured;
}

/** Resolves the fee mode at start; a node that cannot be asked leaves auto at zero (warned) and the rest as set. */
export async function detectFeeMode(pool: Pick<UpstreamPool, "call">, configured: ConfiguredFeeMode, log: Logger): Promise<FeeMode> {
  let fees: NodeFees;
  try {
    fees = await nodeFees(pool);
  } catch (err) {
    if (configured === "auto")
      log.warn("could not ask the node its fees: zero-fee writes assumed; set FEE_MODE to be explicit", { error: (err as Error).message });
    return configured === "auto" ? "zero" : configured;
  }
  const mode = feeModeFor(configured, fees);
  if (configured === "auto")
    log.info("fee regime detected from the node", { feeMode: mode, gasPrice: String(fees.gasPrice), baseFee: String(fees.baseFee ?? "none") });
  return mode;
}
