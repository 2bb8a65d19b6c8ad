// The health probe's reading of a node's answers (pure): another chain by chain id or by genesis, the head,
// and syncing (a node without eth_syncing is taken as not syncing).
import { describe, expect, it } from "vitest";
import { readProbe } from "../../src/chain/upstreamProbe.js";
import { newUpstream, routeOrder, DEFAULT_ROUTING } from "../../src/chain/upstreamRouting.js";

const answers = (chainId: string, genesis: string, head: string, syncing: unknown) => [
  { jsonrpc: "2.0", id: 2, result: head },
  { jsonrpc: "2.0", id: 0, result: chainId },
  { jsonrpc: "2.0", id: 1, result: { hash: genesis } },
  syncing === undefined ? { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "no such method" } } : { jsonrpc: "2.0", id: 3, result: syncing },
];

describe("readProbe", () => {
  it("reads head and syncing, in any reply order", () => {
    expect(readProbe(answers("0x1", "0xg", "0x10", false), "0x1", "0xg")).toEqual({ head: "0x10", syncing: false });
    expect(readProbe(answers("0x1", "0xg", "0x10", { currentBlock: "0x1" }), "0x1", undefined)).toEqual({ head: "0x10", syncing: true });
    expect(readProbe(answers("0x1", "0xg", "0x10", undefined), "0x1", "0xg").syncing).toBe(false);
  });
  it("another chain: by chain id, or by genesis once it is known", () => {
    expect(readProbe(answers("0x2", "0xg", "0x10", false), "0x1", undefined).wrongChain).toMatch(/chain id "0x2", expected 0x1/);
    expect(readProbe(answers("0x1", "0xh", "0x10", false), "0x1", "0xg").wrongChain).toMatch(/genesis 0xh, expected 0xg/);
    expect(readProbe(answers("0x1", "0xh", "0x10", false), "0x1", undefined).wrongChain).toBeUndefined();
  });
});

describe("routeOrder", () => {
  const node = (name: string, figures: Partial<ReturnType<typeof newUpstream>>) => {
    const u = newUpstream(`http://${name}:8545`, DEFAULT_ROUTING, 1_000);
    u.http.close();
    return Object.assign(u, figures);
  };
  it("fresh nodes by score, then lagging or syncing ones, then unhealthy or open ones; another chain never", () => {
    const fast = node("fast", { head: 100, latencyMs: 5 });
    const slow = node("slow", { head: 99, latencyMs: 50 });
    const behind = node("behind", { head: 90, latencyMs: 1 });
    const syncing = node("syncing", { head: 100, latencyMs: 1, syncing: true });
    const open = node("open", { head: 100, latencyMs: 1, openUntil: performance.now() + 60_000 });
    const down = node("down", { head: 100, latencyMs: 2, healthy: false });
    const other = node("other", { head: 100, wrongChain: true });
    const order = routeOrder([down, other, behind, open, slow, syncing, fast], DEFAULT_ROUTING).map((u) => u.label);
    expect(order).toEqual(["http://fast:8545", "http://slow:8545", "http://syncing:8545", "http://behind:8545", "http://open:8545", "http://down:8545"]);
  });
});
