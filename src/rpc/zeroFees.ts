// What a zero-fee network tells fee-pricing clients: nothing to pay. The node may say otherwise (anvil
// suggests a 1 gwei tip; a block's voluntary tips show in eth_feeHistory's rewards), and ethers, viem, cast and
// wallets price from these answers, so an unfunded account could not send. Registered for "zero" fee mode.
// Gas estimates are asked without the caller's fee fields: cast and forge (alloy) never offer less than a 1 wei
// tip, and a node then caps the estimate by balance / fee, which for an unfunded account is 0 ("gas required
// exceeds allowance: 0"), although the gas a call needs does not depend on its price.
import type { JsonValue } from "../errors.js";
import type { RpcCore } from "./rpcCore.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";

export function answerZeroFees(core: RpcCore, pool: UpstreamPool): void {
  core.answerLocally("eth_gasPrice", "0x0");
  core.answerLocally("eth_maxPriorityFeePerGas", "0x0");
  core.register("eth_feeHistory", async (_ctx, params) => zeroFeeHistory(await pool.call("eth_feeHistory", params)));
  core.register("eth_estimateGas", (_ctx, params) => pool.call("eth_estimateGas", withoutFees(params)));
}

const FEE_FIELDS = ["gasPrice", "maxFeePerGas", "maxPriorityFeePerGas"];

/** eth_estimateGas params with the call's fee fields left out (block tag and overrides kept). */
export function withoutFees(params: readonly JsonValue[]): JsonValue[] {
  const [call, ...rest] = params;
  if (typeof call !== "object" || call === null || Array.isArray(call)) return [...params];
  const stripped = Object.fromEntries(Object.entries(call).filter(([k]) => !FEE_FIELDS.includes(k)));
  return [stripped, ...rest];
}

/** The node's fee history with every base fee and reward 0 (block count, ratios and oldest block kept). */
export function zeroFeeHistory(history: JsonValue): JsonValue {
  if (typeof history !== "object" || history === null || Array.isArray(history)) return history;
  const h = { ...history };
  if (Array.isArray(h.baseFeePerGas)) h.baseFeePerGas = h.baseFeePerGas.map(() => "0x0");
  if (Array.isArray(h.reward)) h.reward = h.reward.map((row) => (Array.isArray(row) ? row.map(() => "0x0") : row));
  return h;
}
