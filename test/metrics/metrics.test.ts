// /metrics after a short mixed run shows non-zero counters for every family.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";

describe("Prometheus metrics", () => {
  let gw: Gateway;
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    // In front of anvil: the first broadcast fails transiently, so the retry counter has something to count.
    proxy = await startFaultyUpstream(node.url);
    proxy.failNext(1, /eth_sendRawTransaction/);
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.tryItOutRequestsPerWindow = 3;
        c.networks[0]!.upstreams = [proxy.url];
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  it("counts requests, calls, upstream latency and health, rejections, sequencer work and nonce lag", async () => {
    const url = gw.network("testnet").url;
    await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    await postJson(url, { jsonrpc: "2.0", id: 2, method: "eth_accounts", params: [] });
    const hashes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await postJson(url + "/zkt/try-it-out", { arguments: `metric ${i}` }); // the 4th is rate-limited
      if (res.status === 200) hashes.push((res.json as { hash: string }).hash);
    }
    await Promise.all(hashes.map((h) => gw.network("testnet").sequencer.waitForReceipt(h)));
    const text = await (await fetch(url + "/metrics")).text();
    const value = (pattern: RegExp): number => {
      const m = text.split("\n").filter((l) => pattern.test(l));
      return m.reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
    };
    expect(value(/^gateway_http_requests_total\{.*network="testnet"/)).toBeGreaterThan(0);
    expect(value(/^gateway_rpc_calls_total\{.*method="eth_blockNumber".*outcome="ok"/)).toBeGreaterThan(0);
    expect(value(/^gateway_rpc_calls_total\{.*outcome="-32601"/)).toBeGreaterThan(0);
    expect(value(/^gateway_upstream_request_seconds_count\{/)).toBeGreaterThan(0);
    expect(value(/^gateway_upstream_healthy\{/)).toBe(1);
    expect(value(/^gateway_rate_limit_rejections_total\{.*scope="try-it-out"/)).toBe(1);
    expect(text).toMatch(/^gateway_sequencer_queue_depth\{network="testnet"\} \d+/m);
    expect(value(/^gateway_broadcast_retries_total\{/)).toBeGreaterThan(0);
    // Nonce lag is aggregated per network: one series per signer grew without bound (#35).
    expect(text).toMatch(/^gateway_nonce_lag_max\{network="testnet"\} \d+$/m);
    expect(text).toMatch(/^gateway_lanes_lagging\{network="testnet"\} \d+$/m);
    expect(text).not.toMatch(/signer="/);
    // No path (which may carry a key) ever becomes a label; a route is its template, not a regex source (#65).
    expect(text).not.toMatch(/cgw_/);
    expect(text).toMatch(/^gateway_http_requests_total\{network="testnet",route="\/zkt\/try-it-out",status="200"\} \d+$/m);
    expect(text).not.toMatch(/route="\^/);
    expect(text).toMatch(/^gateway_chain_rewinds_total\{network="testnet"\} 0$/m);
    expect(text).not.toMatch(/gateway_process_process_/);
    // The stores' health for the alerts (#67): the embedded SQLite takes writes; no Redis, no Redis gauge.
    expect(text).toMatch(/^gateway_store_up\{store="embedded"\} 1$/m);
    expect(text).not.toMatch(/^gateway_rate_limit_store_up\{/m);
  });

  it("keeps exact per-call counts across scrapes (counted in plain integers, handed over when scraped)", async () => {
    const url = gw.network("testnet").url;
    const scrape = async (): Promise<number> => {
      const text = await (await fetch(url + "/metrics")).text();
      const line = text.split("\n").find((l) => /^gateway_rpc_calls_total\{.*method="eth_chainId".*outcome="ok"/.test(l));
      return line ? Number(line.split(" ").pop()) : 0;
    };
    const call = (): Promise<unknown> => postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const before = await scrape();
    for (let i = 0; i < 3; i++) await call();
    expect(await scrape()).toBe(before + 3);
    expect(await scrape()).toBe(before + 3); // a scrape with nothing new adds nothing
    await call();
    await call();
    expect(await scrape()).toBe(before + 5);
  });
});
