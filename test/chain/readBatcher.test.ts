// Point reads arriving together ride to the node as one batch; a read alone, a slow method, or a node
// refusing batches changes nothing a caller sees (readBatcher.ts).
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedNode } from "../../src/chain/embeddedNode.js";
import { UpstreamPool, type UpstreamPoolOptions } from "../../src/chain/upstreamPool.js";
import { createLogger } from "../../src/log/logger.js";
import { FAKE_CHAIN_ID, type FakeNodeOptions, startFakeNode } from "../helpers/fakeNode.js";

const address = (i: number) => "0x" + i.toString(16).padStart(40, "0");
const balance = (i: number) => ({ method: "eth_getBalance", params: [address(i), "latest"] });

describe("gathering point reads into batches", () => {
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const c of closers) c();
  });

  async function pool(node: Partial<FakeNodeOptions> = {}, options: Partial<UpstreamPoolOptions> = {}) {
    const fake = await startFakeNode({ chainId: FAKE_CHAIN_ID, ...node });
    const p = new UpstreamPool({ urls: [fake.url], chainId: FAKE_CHAIN_ID, timeoutMs: 2_000, probeIntervalMs: 60_000, log: createLogger("error"), ...options });
    await p.start();
    closers.push(() => {
      p.stop();
      fake.close();
    });
    return { pool: p, node: fake };
  }

  it("the first read of a turn goes at once; the rest of the turn's reads go as one batch, each caller getting its own answer", async () => {
    const { pool: p, node } = await pool();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => p.callMany([balance(i + 1)])));
    expect(answers[0]).toEqual([{ ok: true, raw: '"0x7"', result: "0x7" }]);
    expect(answers.slice(1)).toEqual(Array.from({ length: 9 }, () => [{ ok: true, result: "0x7" }]));
    expect(node.requests.map((r) => r.length).sort()).toEqual([1, 9]);
  });

  it("a read alone goes alone, as a plain call", async () => {
    const { pool: p, node } = await pool();
    const [answer] = await p.callMany([balance(1)]);
    expect(answer).toMatchObject({ ok: true, raw: '"0x7"' });
    expect(node.requests).toEqual([["eth_getBalance"]]);
  });

  it("a call's error stays that call's", async () => {
    const { pool: p, node } = await pool();
    const dead = { method: "eth_getBalance", params: ["0x" + "0".repeat(36) + "dead", "latest"] };
    const [first, bad, good] = await Promise.all([p.callMany([balance(1)]), p.callMany([dead]), p.callMany([balance(2)])]);
    expect(node.requests.map((r) => r.length).sort()).toEqual([1, 2]);
    expect(first).toMatchObject([{ ok: true, result: "0x7" }]);
    expect(bad[0]).toMatchObject({ ok: false, error: { message: "no balance for dead" } });
    expect(good).toEqual([{ ok: true, result: "0x7" }]);
  });

  it("slow methods (eth_call) are never held with others", async () => {
    const { pool: p, node } = await pool();
    const call = { method: "eth_call", params: [{ to: address(1), data: "0x" }, "latest"] };
    await Promise.all([p.callMany([call]), p.callMany([call]), p.callMany([balance(1)])]);
    // Three requests, on connections of their own: their arrival order is the node's.
    expect(node.requests.map((r) => r.join()).sort()).toEqual(["eth_call", "eth_call", "eth_getBalance"]);
  });

  it("at most 40 calls ride together", async () => {
    const { pool: p, node } = await pool();
    await Promise.all(Array.from({ length: 90 }, (_, i) => p.callMany([balance(i)])));
    expect(node.requests.map((r) => r.length).sort((a, b) => b - a)).toEqual([40, 40, 9, 1]);
  });

  it("a node whose probe refused a batch gets no gathered reads", async () => {
    const { pool: p, node } = await pool({ refuseBatches: true });
    const answers = await Promise.all(Array.from({ length: 3 }, (_, i) => p.callMany([balance(i)])));
    expect(answers.map(([a]) => a!.ok && a!.result)).toEqual(["0x7", "0x7", "0x7"]);
    expect(node.requests.filter((r) => r.includes("eth_getBalance"))).toEqual([["eth_getBalance"], ["eth_getBalance"], ["eth_getBalance"]]);
  });

  it("a node that starts refusing batches still answers every call, each sent again alone", async () => {
    const { pool: p, node } = await pool();
    node.refuseBatches = true;
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => p.callMany([balance(i)])));
    expect(answers.map(([a]) => a!.ok && a!.result)).toEqual(["0x7", "0x7", "0x7", "0x7"]);
    // The first alone at once, the other three as a batch the node refused, then each of them alone.
    expect(node.requests.map((r) => r.length).sort()).toEqual([1, 1, 1, 1, 3]);
  });

  it("no node answering rejects every gathered call, as it would one sent alone", async () => {
    const { pool: p, node } = await pool();
    node.close();
    p.stop();
    const results = await Promise.allSettled([p.callMany([balance(1)]), p.callMany([balance(2)]), p.callMany([balance(3)])]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ kind: "upstream_unavailable" });
  });

  it("on a real node (anvil), each gathered read gets the answer it gets alone", async () => {
    const node = await startEmbeddedNode({ chainId: FAKE_CHAIN_ID, blockTimeSeconds: 60, feeMode: "zero" });
    const p = new UpstreamPool({ urls: [node.url], chainId: FAKE_CHAIN_ID, timeoutMs: 5_000, probeIntervalMs: 60_000, log: createLogger("error") });
    closers.push(() => {
      p.stop();
      void node.stop();
    });
    await p.start();
    // anvil's first dev account is funded, the others asked here are not: answers differ by call.
    const calls = [
      { method: "eth_getBalance", params: ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "latest"] },
      ...Array.from({ length: 5 }, (_, i) => balance(i + 1)),
      { method: "eth_getTransactionCount", params: ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "latest"] },
      { method: "eth_blockNumber", params: [] },
    ];
    const alone = [];
    for (const c of calls) alone.push((await p.callMany([c]))[0]!);
    const together = await Promise.all(calls.map((c) => p.callMany([c]).then(([o]) => o!)));
    expect(together.map((o) => o.ok && o.result)).toEqual(alone.map((o) => o.ok && o.result));
    expect(together[0]).not.toEqual(together[1]);
  });

  it("batchReads: false sends one request per call", async () => {
    const { pool: p, node } = await pool({}, { batchReads: false });
    await Promise.all(Array.from({ length: 3 }, (_, i) => p.callMany([balance(i)])));
    expect(node.requests).toEqual([["eth_getBalance"], ["eth_getBalance"], ["eth_getBalance"]]);
  });
});
