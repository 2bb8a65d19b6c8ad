// The gas a call that runs code on the node may burn. A node without its own cap (anvil has none: a looping
// contract called with gas 0xffffffffffff runs until the node is killed, and it stops mining meanwhile) is
// protected by the gateway lowering the call's `gas` before it is sent, as geth's --rpc.gascap does.
import type { JsonValue } from "../errors.js";

/** The most gas one call may carry when neither configuration nor the chain says less (geth's default cap). */
export const DEFAULT_CALL_GAS_CAP = 50_000_000n;

/** Methods whose first param is one transaction the node executes. */
const SINGLE_CALL_METHODS = new Set(["eth_call", "eth_estimateGas", "eth_createAccessList"]);

/** Methods whose params make the node execute code: capped here, and held to a per-caller share of the node. */
export const EXECUTING_METHODS = new Set([...SINGLE_CALL_METHODS, "eth_simulateV1"]);

/**
 * `params` with every executed call's gas at most `cap`: the same array when nothing changes. A gas the
 * node could not read is left for the node to refuse. eth_simulateV1's calls share one cap between them, and
 * a call without a gas gets an even share of it, so a long list of calls cannot add up past it.
 */
export function capCallGas(method: string, params: JsonValue[], cap: bigint): JsonValue[] {
  if (SINGLE_CALL_METHODS.has(method)) {
    const tx = params[0];
    if (!isObject(tx)) return params;
    const gas = readGas(tx.gas);
    if (gas === undefined || gas <= cap) return params;
    const capped = params.slice();
    capped[0] = { ...tx, gas: toHex(cap) };
    return capped;
  }
  if (method === "eth_simulateV1") return capSimulation(params, cap);
  return params;
}

function capSimulation(params: JsonValue[], cap: bigint): JsonValue[] {
  const opts = params[0];
  if (!isObject(opts) || !Array.isArray(opts.blockStateCalls)) return params;
  const blocks = opts.blockStateCalls;
  let count = 0;
  for (const block of blocks) if (isObject(block) && Array.isArray(block.calls)) count += block.calls.length;
  if (count === 0) return params;
  const share = cap / BigInt(count);
  let left = cap;
  const cappedBlocks = blocks.map((block) => {
    if (!isObject(block) || !Array.isArray(block.calls)) return block;
    const calls = block.calls.map((call) => {
      if (!isObject(call)) return call;
      const wanted = readGas(call.gas) ?? share;
      const given = wanted < left ? wanted : left;
      left -= given;
      return { ...call, gas: toHex(given) };
    });
    return { ...block, calls };
  });
  const capped = params.slice();
  capped[0] = { ...opts, blockStateCalls: cappedBlocks };
  return capped;
}

function readGas(value: JsonValue | undefined): bigint | undefined {
  if (typeof value === "string" && /^0x[0-9a-fA-F]{1,64}$/.test(value)) return BigInt(value);
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return undefined;
}

function toHex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
