// The read cache serves only what cannot change: by hash, or at blocks deep enough to be final.
import { describe, expect, it } from "vitest";
import { ImmutableCache } from "../../src/rpc/immutableCache.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { afterAll, beforeAll } from "vitest";

describe("ImmutableCache rules", () => {
  const cache = new ImmutableCache({ maxEntries: 3, confirmations: 2 });
  cache.observeHead("0xa"); // head 10: blocks <= 8 are final

  it("caches blocks by hash, and by number only when deep enough", () => {
    cache.put("eth_getBlockByHash", ["0xaa", false], { number: "0xa" });
    expect(cache.get("eth_getBlockByHash", ["0xaa", false])).toEqual({ number: "0xa" });
    cache.put("eth_getBlockByNumber", ["0x8", false], { n: 8 });
    cache.put("eth_getBlockByNumber", ["0x9", false], { n: 9 });
    cache.put("eth_getBlockByNumber", ["latest", false], { n: 10 });
    expect(cache.get("eth_getBlockByNumber", ["0x8", false])).toEqual({ n: 8 });
    expect(cache.get("eth_getBlockByNumber", ["0x9", false])).toBeUndefined();
    expect(cache.get("eth_getBlockByNumber", ["latest", false])).toBeUndefined();
  });

  it("caches receipts only once their block is final, and never nulls", () => {
    cache.put("eth_getTransactionReceipt", ["0x01"], { blockNumber: "0x9" });
    cache.put("eth_getTransactionReceipt", ["0x02"], null);
    expect(cache.get("eth_getTransactionReceipt", ["0x01"])).toBeUndefined();
    expect(cache.get("eth_getTransactionReceipt", ["0x02"])).toBeUndefined();
    cache.put("eth_getTransactionReceipt", ["0x03"], { blockNumber: "0x2" });
    expect(cache.get("eth_getTransactionReceipt", ["0x03"])).toEqual({ blockNumber: "0x2" });
  });

  it("evicts the least recently used beyond maxEntries", () => {
    cache.put("eth_getCode", ["0xabc", "0x1"], "0x60");
    cache.put("eth_getCode", ["0xabd", "0x1"], "0x61");
    expect(cache.get("eth_getBlockByHash", ["0xaa", false])).toBeUndefined();
  });
});

describe("cache through the gateway", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.close());

  it("a block by hash is served from memory the second time, identical to the node's answer", async () => {
    const url = gw.network("testnet").url;
    const latest = (
      (await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", true] })).json as { result: { hash: string } }
    ).result;
    const ask = () => postJson(url, { jsonrpc: "2.0", id: 2, method: "eth_getBlockByHash", params: [latest.hash, true] });
    const first = await ask();
    const hits = gw.network("testnet").core.cache!.hits;
    const second = await ask();
    expect(second.json).toEqual(first.json);
    expect(gw.network("testnet").core.cache!.hits).toBe(hits + 1);
  });
});
