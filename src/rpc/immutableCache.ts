// Answers that can never change, served from memory. Reorg-safe rules:
//  - by hash (eth_getBlockByHash, and a transaction/receipt whose block is known): a hash names one block
//    forever, but a transaction can move to another block in a reorg, so transactions and receipts are cached
//    only once their block is `confirmations` deep;
//  - by block number (eth_getBlockByNumber, eth_getCode/eth_getBalance/eth_getStorageAt/eth_call at a 0x
//    number): only when that block is `confirmations` deep (below the head by at least that many);
//  - tags ("latest", "pending", "safe", …) and null results are never cached.
import { LRUCache } from "lru-cache";
import type { JsonValue } from "../errors.js";

export interface CacheOptions {
  maxEntries: number;
  /** Depth below the head after which a block can no longer be reorganised away. */
  confirmations: number;
}

const BLOCK_ARG_INDEX: Record<string, number> = {
  eth_getBlockByNumber: 0,
  eth_getCode: 1,
  eth_getBalance: 1,
  eth_getStorageAt: 2,
  eth_call: 1,
  eth_getTransactionCount: 1,
};

interface Entry {
  value: JsonValue;
  raw: string | undefined;
}

export class ImmutableCache {
  private readonly entries: LRUCache<string, Entry>;
  /** The highest block number seen; stale is safe (it only caches less). */
  head = -1;
  hits = 0;

  constructor(private readonly options: CacheOptions) {
    this.entries = new LRUCache({ max: options.maxEntries });
  }

  get(method: string, params: JsonValue[]): JsonValue | undefined {
    return this.getEntry(method, params)?.value;
  }

  /** The cached value with its JSON text (kept, so a hit is answered without serialising a large result again). */
  getEntry(method: string, params: JsonValue[]): { value: JsonValue; raw: string } | undefined {
    if (!this.mayHold(method, params)) return undefined;
    const key = method + JSON.stringify(params);
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    this.hits++;
    e.raw ??= JSON.stringify(e.value);
    return e as { value: JsonValue; raw: string };
  }

  /** Keeps an answer if the reorg-safe rules allow; `raw` is its JSON text as received, when known. */
  put(method: string, params: JsonValue[], result: JsonValue, raw?: string): void {
    if (result === null || !this.cacheable(method, params, result)) return;
    this.entries.set(method + JSON.stringify(params), { value: result, raw });
  }

  observeHead(blockNumberHex: JsonValue): void {
    if (typeof blockNumberHex === "string" && /^0x[0-9a-fA-F]+$/.test(blockNumberHex)) this.head = Math.max(this.head, Number.parseInt(blockNumberHex, 16));
  }

  /** Cheap pre-check so hot uncacheable calls (anything at "latest") never build a key nor parse a result. */
  mayHold(method: string, params: JsonValue[]): boolean {
    if (method === "eth_getBlockByHash" || method === "eth_getTransactionReceipt" || method === "eth_getTransactionByHash") return true;
    const i = BLOCK_ARG_INDEX[method];
    return i !== undefined && typeof params[i] === "string" && (params[i] as string).startsWith("0x");
  }

  private deep(blockNumber: unknown): boolean {
    if (typeof blockNumber !== "string" || !/^0x[0-9a-fA-F]+$/.test(blockNumber)) return false;
    return this.head >= 0 && Number.parseInt(blockNumber, 16) <= this.head - this.options.confirmations;
  }

  private cacheable(method: string, params: JsonValue[], result: JsonValue): boolean {
    switch (method) {
      case "eth_getBlockByHash":
        return true;
      case "eth_getTransactionReceipt":
      case "eth_getTransactionByHash":
        return typeof result === "object" && !Array.isArray(result) && this.deep((result as { blockNumber?: unknown }).blockNumber);
      default: {
        const i = BLOCK_ARG_INDEX[method];
        return i !== undefined && this.deep(params[i]);
      }
    }
  }
}
