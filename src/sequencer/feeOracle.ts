// Fee fields for a new transaction. `zero`: legacy gas price 0 (Stability and the embedded default).
// `market`: EIP-1559 from the latest base fee and the node's priority fee, cached for a second.
import type { FeeMode } from "../config/config.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";

export type FeeFields = { type: 0; gasPrice: bigint } | { type: 2; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

export class FeeOracle {
  private cached: { at: number; fees: FeeFields } | undefined;

  constructor(
    private readonly mode: FeeMode,
    private readonly pool: UpstreamPool,
  ) {}

  async current(): Promise<FeeFields> {
    if (this.mode === "zero") return { type: 0, gasPrice: 0n };
    if (this.cached && Date.now() - this.cached.at < 1000) return this.cached.fees;
    // The pending block carries the base fee the next block will charge (where the node exposes it).
    const [block, tip] = await Promise.all([
      this.pool.call("eth_getBlockByNumber", ["pending", false]).catch(() => this.pool.call("eth_getBlockByNumber", ["latest", false])),
      this.pool.call("eth_maxPriorityFeePerGas", []),
    ]);
    const base = BigInt((block as { baseFeePerGas?: string } | null)?.baseFeePerGas ?? "0x0");
    const priority = BigInt(tip as string);
    // Twice the base fee survives several full blocks of base-fee growth before the tx would stall.
    const fees: FeeFields = { type: 2, maxFeePerGas: base * 2n + priority, maxPriorityFeePerGas: priority };
    this.cached = { at: Date.now(), fees };
    return fees;
  }

  /** Forgets the cached fees (after a node refused them). */
  invalidate(): void {
    this.cached = undefined;
  }

  /** Most a transaction of `gas` could cost (to fund signers on dev chains). */
  static maxCost(fees: FeeFields, gas: bigint): bigint {
    return gas * (fees.type === 0 ? fees.gasPrice : fees.maxFeePerGas);
  }
}
