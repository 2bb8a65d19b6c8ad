// Integrity checks on node answers (#55): a node that answers eth_getLogs with a log outside the range asked,
// and a `latest` block three behind, in front of a real anvil; beside it an honest (slower) proxy of the same
// node. Neither lie reaches a client while the honest node answers; with it down, the out-of-range logs are an
// error, never an answer. Counted in gateway_upstream_integrity_total.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Wallet, toBeHex, zeroPadValue } from "ethers";
import { type PoolView, suspect } from "../../src/chain/answerIntegrity.js";
import type { RpcOutcome } from "../../src/chain/upstreamReplies.js";
import type { JsonValue } from "../../src/errors.js";
import type { FaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, rpc } from "../helpers/gateway.js";
import { type TwoProxies, startTwoProxies } from "../helpers/twoProxies.js";
import { until } from "../helpers/until.js";
import { DEV_KEY, EMITTER } from "../helpers/emitter.js";

describe("integrity checks on node answers", () => {
  let proxies: TwoProxies;
  let honest: FaultyUpstream;
  let node: string;
  let url: string;
  let first = 0;
  let last = 0;

  beforeAll(async () => {
    // The honest one answers later, so the liar is asked first.
    proxies = await startTwoProxies((asked) => asked.lie());
    ({ node, url, second: honest } = proxies);
    const wallet = new Wallet(DEV_KEY);
    let nonce = 0;
    const send = async (tx: { to?: string; data: string }) =>
      rpc<string>(node, "eth_sendRawTransaction", [await wallet.signTransaction({ chainId: 20180427, nonce: nonce++, gasLimit: 100_000, gasPrice: 0, ...tx })]);
    const receipt = async (hash: string) => {
      let r: { contractAddress: string; blockNumber: string } | null = null;
      await until(async () => (r = await rpc(node, "eth_getTransactionReceipt", [hash])) !== null);
      return r!;
    };
    const emitter = (await receipt(await send({ data: EMITTER }))).contractAddress;
    const hashes = [];
    for (let i = 1; i <= 3; i++) hashes.push(await send({ to: emitter, data: zeroPadValue(toBeHex(i), 32) }));
    const blocks = await Promise.all(hashes.map(async (h) => Number((await receipt(h)).blockNumber)));
    first = Math.min(...blocks);
    last = Math.max(...blocks);
    // Both proxies probed healthy at the same head.
    await until(async () => Number(await rpc<string>(node, "eth_blockNumber")) > last + 3);
    await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(() => proxies?.close());

  const integrity = async (check: string, outcome: string): Promise<number> => {
    const text = await (await fetch(url + "/metrics")).text();
    const m = new RegExp(`gateway_upstream_integrity_total\\{network="testnet",check="${check}",outcome="${outcome}"\\} (\\d+)`).exec(text);
    return m ? Number(m[1]) : 0;
  };

  it("logs outside the range asked never reach the client: the honest node's answer does", async () => {
    const range = { fromBlock: toBeHex(first), toBlock: toBeHex(last) };
    const truth = await rpc<unknown[]>(node, "eth_getLogs", [range]);
    expect(truth.length).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < 5; i++) {
      const res = await postJson(url, { jsonrpc: "2.0", id: i, method: "eth_getLogs", params: [range] });
      expect((res.json as { result: unknown[] }).result).toEqual(truth);
    }
    expect(await integrity("logs_outside_range", "corrected")).toBeGreaterThanOrEqual(1);
  });

  it("a latest block older than the pool's head is not served", async () => {
    for (let i = 0; i < 5; i++) {
      const head = Number(await rpc<string>(node, "eth_blockNumber"));
      const res = await postJson(url, { jsonrpc: "2.0", id: i, method: "eth_getBlockByNumber", params: ["latest", false] });
      expect(Number((res.json as { result: { number: string } }).result.number)).toBeGreaterThanOrEqual(head - 1);
    }
    expect(await integrity("stale_block", "corrected")).toBeGreaterThanOrEqual(1);
  });

  it("with the honest node down, out-of-range logs are an error, not an answer", async () => {
    honest.down = true;
    try {
      const res = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_getLogs", params: [{ fromBlock: toBeHex(first), toBlock: toBeHex(last) }] });
      expect(res.json).toMatchObject({ error: { message: expect.stringMatching(/logs outside the range asked/) } });
      expect(await integrity("logs_outside_range", "unresolved")).toBeGreaterThanOrEqual(1);
    } finally {
      honest.down = false;
    }
  });
});

describe("suspect (the checks alone)", () => {
  const view = (best: number, lowest: number): PoolView => ({ best, lowest, tagged: new Map([["finalized", 20]]) });
  const ok = (result: JsonValue, raw?: string): RpcOutcome => (raw === undefined ? { ok: true, result } : { ok: true, result, raw });

  it("an empty log query or a null receipt while a node is behind is asked again; level nodes' are believed", () => {
    const logs = { method: "eth_getLogs", params: [{ fromBlock: "0x1e", toBlock: "0x20" }] };
    expect(suspect(logs, ok([], "[]"), view(40, 31))).toBe("missing_behind");
    expect(suspect(logs, ok([], "[]"), view(40, 40))).toBeUndefined();
    const receipt = { method: "eth_getTransactionReceipt", params: ["0x" + "11".repeat(32)] };
    expect(suspect(receipt, ok(null, "null"), view(40, 39))).toBe("missing_behind");
    expect(suspect(receipt, ok(null, "null"), view(40, 40))).toBeUndefined();
  });

  it("a finalized block older than one served is stale; logs of another block hash are outside", () => {
    expect(suspect({ method: "eth_getBlockByNumber", params: ["finalized", false] }, ok({ number: "0x13" }), view(40, 40))).toBe("stale_block");
    expect(suspect({ method: "eth_getBlockByNumber", params: ["finalized", false] }, ok({ number: "0x14" }), view(40, 40))).toBeUndefined();
    const byHash = { method: "eth_getLogs", params: [{ blockHash: "0x" + "aa".repeat(32) }] };
    expect(suspect(byHash, ok([{ blockHash: "0x" + "bb".repeat(32) }]), view(40, 40))).toBe("logs_outside_range");
    expect(suspect(byHash, ok([{ blockHash: "0x" + "AA".repeat(32) }]), view(40, 40))).toBeUndefined();
  });
});
