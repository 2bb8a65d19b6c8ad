// Per-request counts (HTTP answers, JSON-RPC outcomes) and durations, interleaved as mixed traffic is: each
// label set keeps its own count however the requests alternate (the tallies remember the last set counted).
import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/metrics/metrics.js";

describe("Metrics tallies", () => {
  it("interleaved label sets each keep their own count, across scrapes", async () => {
    const m = new Metrics();
    const sequence: [string, string, number][] = [
      ["testnet", "/", 200],
      ["testnet", "/", 200],
      ["testnet", "/", 429],
      ["mainnet", "/", 200],
      ["testnet", "/zkt/{param}", 200],
      ["testnet", "/", 200],
    ];
    for (const [network, route, status] of sequence) m.countHttp(network, route, status);
    const first = await m.text();
    const count = (text: string, labels: string) => Number(new RegExp(`gateway_http_requests_total\\{${labels}\\} (\\d+)`).exec(text)?.[1] ?? 0);
    expect(count(first, 'network="testnet",route="/",status="200"')).toBe(3);
    expect(count(first, 'network="testnet",route="/",status="429"')).toBe(1);
    expect(count(first, 'network="mainnet",route="/",status="200"')).toBe(1);
    expect(count(first, 'network="testnet",route="/zkt/\\{param\\}",status="200"')).toBe(1);
    // After a scrape the remembered set still counts into the same series.
    m.countHttp("testnet", "/", 200);
    expect(count(await m.text(), 'network="testnet",route="/",status="200"')).toBe(4);
  });

  it("durations by transport and method land in their own series when interleaved", async () => {
    const m = new Metrics();
    const observe = m.requestDurations("testnet");
    observe("jsonrpc", "eth_chainId", 0.001);
    observe("jsonrpc", "eth_chainId", 0.001);
    observe("connect", "eth_chainId", 0.001);
    observe("jsonrpc", "eth_call", 0.001);
    observe("jsonrpc", "eth_chainId", 0.001);
    const text = await m.text();
    const count = (labels: string) => Number(new RegExp(`_count\\{${labels}\\} (\\d+)`).exec(text)?.[1] ?? 0);
    expect(count('network="testnet",transport="jsonrpc",method="eth_chainId"')).toBe(3);
    expect(count('network="testnet",transport="connect",method="eth_chainId"')).toBe(1);
    expect(count('network="testnet",transport="jsonrpc",method="eth_call"')).toBe(1);
  });

  it("upstream round trips by network and node land in their own series when interleaved", async () => {
    const m = new Metrics();
    for (const [network, upstream] of [
      ["testnet", "a"],
      ["testnet", "a"],
      ["testnet", "b"],
      ["mainnet", "a"],
      ["testnet", "a"],
    ] as const)
      m.observeUpstream(network, upstream, 0.01);
    const text = await m.text();
    const count = (labels: string) => Number(new RegExp(`_count\\{${labels}\\} (\\d+)`).exec(text)?.[1] ?? 0);
    expect(count('network="testnet",upstream="a"')).toBe(3);
    expect(count('network="testnet",upstream="b"')).toBe(1);
    expect(count('network="mainnet",upstream="a"')).toBe(1);
  });
});
