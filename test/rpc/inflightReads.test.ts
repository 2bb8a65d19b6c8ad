// Request coalescing against a real node behind a slow proxy (an overloaded node): identical reads in flight
// together cost the node one request; distinct reads, filter polls and a gateway with coalescing off do not share.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";

const ADDRESS = "0x00000000000000000000000000000000000c0a1e";
const balanceCall = (id: number, address = ADDRESS) => ({ jsonrpc: "2.0", id, method: "eth_getBalance", params: [address, "latest"] });

describe("coalescing identical in-flight reads", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let on: Gateway;
  let off: Gateway;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    // The proxy counts HTTP requests: reads gathered into one batch (readBatcher.ts) would count as one.
    on = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.batchUpstreamReads = false;
      },
    });
    off = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.coalesceReads = false;
        c.batchUpstreamReads = false;
      },
    });
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
    proxy?.close();
    await node?.stop();
  });

  it("20 identical reads at once reach the node once, and each caller gets its own id and the right answer", async () => {
    proxy.slow(200, /0c0a1e/);
    const url = on.network("testnet").url + "/";
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(url, balanceCall(i + 1))));
    expect(proxy.matched).toBe(1);
    answers.forEach((a, i) => {
      expect(a.status).toBe(200);
      expect(a.json).toEqual({ jsonrpc: "2.0", id: i + 1, result: "0x0" });
    });
  });

  it("a read after the shared one settled goes upstream again (nothing is served stale)", async () => {
    proxy.slow(50, /0c0a1e/);
    const url = on.network("testnet").url + "/";
    await postJson(url, balanceCall(1));
    await postJson(url, balanceCall(2));
    expect(proxy.matched).toBe(2);
  });

  it("different params are different reads", async () => {
    proxy.slow(200, /0c0a1/);
    const url = on.network("testnet").url + "/";
    const addresses = [1, 2, 3, 4, 5].map((n) => `0x00000000000000000000000000000000000c0a1e`.slice(0, -1) + n);
    await Promise.all(addresses.map((a, i) => postJson(url, balanceCall(i, a))));
    expect(proxy.matched).toBe(5);
  });

  it("reads of the pending block are never shared (a sender's next nonce must see its last send)", async () => {
    proxy.slow(200, /0c0a1e/);
    const url = on.network("testnet").url + "/";
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => postJson(url, { jsonrpc: "2.0", id: i, method: "eth_getTransactionCount", params: [ADDRESS, "pending"] })),
    );
    expect(proxy.matched).toBe(5);
  });

  it("filter polls are never shared: each consumes its own changes (the gateway's filters, #55: none reaches the node)", async () => {
    const url = on.network("testnet").url + "/";
    const created = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_newBlockFilter", params: [] });
    const filterId = (created.json as { result: string }).result;
    proxy.slow(0, /eth_getFilterChanges/);
    await new Promise((r) => setTimeout(r, 1_000));
    const polls = await Promise.all(
      Array.from({ length: 5 }, (_, i) => postJson(url, { jsonrpc: "2.0", id: i, method: "eth_getFilterChanges", params: [filterId] })),
    );
    const hashes = polls.flatMap((p) => (p.json as { result: string[] }).result);
    expect(hashes.length).toBeGreaterThan(0);
    expect(new Set(hashes).size).toBe(hashes.length);
    expect(proxy.matched).toBe(0);
  });

  it("with coalesceReads off, every read goes upstream", async () => {
    proxy.slow(200, /0c0a1e/);
    const url = off.network("testnet").url + "/";
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => postJson(url, balanceCall(i))));
    expect(proxy.matched).toBe(10);
    for (const a of answers) expect((a.json as { result: string }).result).toBe("0x0");
  });

  it("a failed shared read fails every joined caller with the same error, and the next read retries", async () => {
    proxy.slow(200, /0c0a1e/, 1);
    const url = on.network("testnet").url + "/";
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => postJson(url, balanceCall(i))));
    // The only upstream has nowhere to fail over to: the five joined callers share its one failure.
    expect(proxy.matched).toBe(1);
    for (const a of answers) expect(a.status).toBe(503);
    const again = await postJson(url, balanceCall(9));
    expect((again.json as { result: string }).result).toBe("0x0");
  });
});
