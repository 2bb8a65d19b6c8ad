// The validator set of a network and which of it is active. The set comes from a per-network source: a
// static list in config, the node's own consensus RPC (clique / qbft), or the coinbase (a dev node).
// Active = members of the set that proposed (`miner`) at least one of the last N blocks.
import { getAddress } from "ethers";
import { GatewayError, type JsonValue } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";

export type ValidatorSourceConfig = { source: "static"; addresses: string[] } | { source: "clique" } | { source: "qbft" } | { source: "coinbase" };

export interface ValidatorOptions {
  config: ValidatorSourceConfig;
  /** How many recent blocks decide who is active. */
  activeWindowBlocks: number;
}

interface Block {
  number: string;
  hash: string;
  miner: string;
}

export class Validators {
  constructor(
    private readonly pool: UpstreamPool,
    private readonly options: ValidatorOptions,
  ) {}

  /** The validator set, now or at a block hash. */
  async list(blockHash?: string): Promise<string[]> {
    const c = this.options.config;
    let raw: JsonValue;
    switch (c.source) {
      case "static":
        return c.addresses.map((a) => getAddress(a));
      case "clique":
        raw = await this.pool.call(blockHash ? "clique_getSignersAtHash" : "clique_getSigners", blockHash ? [blockHash] : []);
        break;
      case "qbft":
        raw = await this.pool.call(blockHash ? "qbft_getValidatorsByBlockHash" : "qbft_getValidatorsByBlockNumber", blockHash ? [blockHash] : ["latest"]);
        break;
      case "coinbase":
        raw = [await this.pool.call("eth_coinbase", [])];
        break;
    }
    if (!Array.isArray(raw) || !raw.every((a) => typeof a === "string" && /^0x[0-9a-fA-F]{40}$/.test(a))) {
      throw new GatewayError("internal", `the node's ${c.source} validator answer was not a list of addresses`);
    }
    return [...new Set(raw.map((a) => getAddress(a as string)))];
  }

  /** Members of the set that proposed one of the last N blocks (ending at blockHash, when given). */
  async active(blockHash?: string): Promise<string[]> {
    const [set, head] = await Promise.all([this.list(blockHash), this.block(blockHash ?? "latest")]);
    const last = Number(BigInt(head.number));
    const first = Math.max(0, last - this.options.activeWindowBlocks + 1);
    const numbers = Array.from({ length: last - first }, (_, i) => "0x" + (first + i).toString(16));
    const outcomes = await this.pool.callMany(numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [n, false] })));
    const proposers = new Set([getAddress(head.miner)]);
    for (const o of outcomes)
      if (o.ok && o.result && typeof o.result === "object" && !Array.isArray(o.result)) proposers.add(getAddress((o.result as unknown as Block).miner));
    return set.filter((v) => proposers.has(v));
  }

  private async block(ref: string): Promise<Block> {
    const isHash = /^0x[0-9a-fA-F]{64}$/.test(ref);
    const b = (await this.pool.call(isHash ? "eth_getBlockByHash" : "eth_getBlockByNumber", [ref, false])) as unknown as Block | null;
    if (!b) throw new GatewayError("invalid_params", `Invalid params: no block with hash ${ref}`);
    return b;
  }
}
