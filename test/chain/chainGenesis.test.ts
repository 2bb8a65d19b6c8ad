// Which chain a network's journal is for (#52): pinned from the first node that says, kept when no node
// answers, never swapped for another node's, replaced only by the operator's word; the embedded node's genesis is kept apart while its state file goes on.
import { describe, expect, it } from "vitest";
import { chainGenesis } from "../../src/chain/chainGenesis.js";
import { createLogger } from "../../src/log/logger.js";

const A = "0x" + "aa".repeat(32);
const B = "0x" + "bb".repeat(32);
const node = (hash: string | undefined) => ({
  call: async () => {
    if (hash === undefined) throw new Error("connection refused");
    return { hash };
  },
});
const store = () => {
  const pins = new Map<string, string>();
  return { pins, pinnedGenesis: async (n: string) => pins.get(n), pinGenesis: async (n: string, h: string) => void pins.set(n, h) };
};
const log = createLogger("silent");

describe("chainGenesis", () => {
  it("pins the first node's genesis, and keeps it when no node answers or another chain does", async () => {
    const s = store();
    expect(await chainGenesis({ pool: node(A), store: s, network: "testnet", pinned: undefined, ownChain: false, log })).toBe(A);
    expect(s.pins.get("testnet")).toBe(A);
    expect(await chainGenesis({ pool: node(undefined), store: s, network: "testnet", pinned: A, ownChain: false, log })).toBe(A);
    expect(await chainGenesis({ pool: node(B), store: s, network: "testnet", pinned: A, ownChain: false, log })).toBe(A);
    expect(s.pins.get("testnet")).toBe(A);
  });

  it("takes the operator's configured genesis in place of the pinned one", async () => {
    const s = store();
    s.pins.set("testnet", A);
    expect(await chainGenesis({ pool: node(undefined), store: s, network: "testnet", pinned: A, configured: B, ownChain: false, log })).toBe(B);
    expect(s.pins.get("testnet")).toBe(B);
  });

  it("the embedded node is the chain and does not pin the network (a later start in front of real nodes is not bound by it)", async () => {
    const s = store();
    expect(await chainGenesis({ pool: node(B), store: s, network: "testnet", pinned: undefined, ownChain: true, log })).toBe(B);
    expect(s.pins.has("testnet")).toBe(false);
  });

  it("the embedded chain that went on from its state file keeps its genesis, whatever block 0 anvil reports after the load", async () => {
    const s = store();
    expect(await chainGenesis({ pool: node(A), store: s, network: "testnet", pinned: undefined, ownChain: true, log })).toBe(A);
    expect(await chainGenesis({ pool: node(B), store: s, network: "testnet", pinned: undefined, ownChain: true, continued: true, log })).toBe(A);
    // A new chain (no state file to go on from) is keyed by its own genesis.
    expect(await chainGenesis({ pool: node(B), store: s, network: "testnet", pinned: undefined, ownChain: true, continued: false, log })).toBe(B);
  });
});
