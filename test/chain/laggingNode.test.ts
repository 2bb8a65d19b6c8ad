// Correct behind a node one block behind the other (#68), the usual state of a pool: upstreams [L, B] where L
// answers as a node a block behind B would (head, latest, blocks past its head null, log ranges cut at it).
// A client following the head must never see it go back, a block at the head answered null, or fewer logs
// than the chain has — with 40 concurrent log readers as load, and with B gone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { rpc, startTestGateway } from "../helpers/gateway.js";

/** PUSH1 0 PUSH1 0 LOG0 STOP: every call leaves one log. */
const EMITTER = "0x00000000000000000000000000000000000e1111";
const DEV = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

describe("behind a node that lags a block", () => {
  const children: ChildProcess[] = [];
  let lagging: FaultyUpstream;
  let level: FaultyUpstream;
  let gw: Gateway;
  let node: string;
  let url: string;
  let emitting = true;
  let emitter: Promise<void>;
  beforeAll(async () => {
    const port = await freePort();
    node = `http://127.0.0.1:${port}`;
    children.push(await startAnvil(port));
    await rpc(node, "anvil_setCode", [EMITTER, "0x60006000a000"]);
    lagging = await startFaultyUpstream(node);
    lagging.lagBehind(1);
    // The level node behind a proxy of its own too, so both answer as fast and routing favours neither.
    level = await startFaultyUpstream(node);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [lagging.url, level.url];
        c.upstreamProbeIntervalMs = 250;
        c.rateLimit.requestsPerWindow = 10_000_000;
        c.coalesceReads = false;
        // The 40 readers are load on the nodes, not one caller to hold to its share.
        c.nodeSharePerCaller = 64;
      },
    });
    url = gw.network("testnet").url;
    // Logs all along: a transaction to the emitter every 60 ms (the node mines every 0.25 s: startAnvil).
    emitter = (async () => {
      while (emitting) {
        await rpc(node, "eth_sendTransaction", [{ from: DEV, to: EMITTER, gas: "0x10000" }]).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 60));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_500));
  });
  afterAll(async () => {
    emitting = false;
    await emitter;
    await gw?.close();
    lagging?.close();
    level?.close();
    await Promise.all(children.map(kill9));
  });

  const call = async <T>(method: string, params: unknown[]): Promise<T> => rpc<T>(url, method, params);

  it("over 300 rounds of (head, block at head, logs up to head) with 40 log readers as load: never back, never null, never short", {
    timeout: 120_000,
  }, async () => {
    let loading = true;
    const readers = Array.from({ length: 40 }, async () => {
      while (loading) {
        const head = Number(await call<string>("eth_blockNumber", []).catch(() => "0x0"));
        await call("eth_getLogs", [{ fromBlock: `0x${Math.max(1, head - 10).toString(16)}`, toBlock: "latest", address: EMITTER }]).catch(() => undefined);
      }
    });
    const problems: string[] = [];
    let last = -1;
    try {
      for (let round = 0; round < 300; round++) {
        const head = Number(await call<string>("eth_blockNumber", []));
        if (head < last) problems.push(`round ${round}: head ${head} after ${last}`);
        last = Math.max(last, head);
        const hex = `0x${head.toString(16)}`;
        const block = await call<{ number: string } | null>("eth_getBlockByNumber", [hex, false]);
        if (block === null) problems.push(`round ${round}: block ${head} null`);
        const range = { fromBlock: `0x${Math.max(1, head - 20).toString(16)}`, toBlock: hex, address: EMITTER };
        const logs = await call<unknown[]>("eth_getLogs", [range]);
        const truth = await rpc<unknown[]>(node, "eth_getLogs", [range]);
        if (logs.length < truth.length) problems.push(`round ${round}: ${logs.length} logs up to ${head}, the chain has ${truth.length}`);
      }
    } finally {
      loading = false;
      await Promise.all(readers);
    }
    expect(problems).toEqual([]);
  });

  it("with the level node gone: latest and receipts never go back (200 rounds)", { timeout: 120_000 }, async () => {
    // The gateway has answered the level node's head; from now only the node a block behind is left.
    // Receipts of the newest blocks seen while both answered (those the lagging node lacks came from the other).
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      const head = await call<string>("eth_blockNumber", []);
      const block = await call<{ transactions: string[] } | null>("eth_getBlockByNumber", [head, false]);
      const hash = block?.transactions[0];
      if (hash && (await call("eth_getTransactionReceipt", [hash])) !== null) seen.push(hash);
    }
    level.close();
    const problems: string[] = [];
    let last = -1;
    for (const hash of seen)
      if ((await call("eth_getTransactionReceipt", [hash])) === null) problems.push(`receipt of ${hash} null once the level node was gone`);
    for (let round = 0; round < 200; round++) {
      const head = Number(await call<string>("eth_blockNumber", []));
      if (head < last) problems.push(`round ${round}: head ${head} after ${last}`);
      last = Math.max(last, head);
      const latest = await call<{ number: string; transactions: string[] } | null>("eth_getBlockByNumber", ["latest", false]).catch((e: Error) => e);
      if (latest instanceof Error || latest === null) problems.push(`round ${round}: latest ${latest instanceof Error ? latest.message : "null"}`);
      else {
        if (Number(latest.number) < last) problems.push(`round ${round}: latest ${Number(latest.number)} after ${last}`);
        last = Math.max(last, Number(latest.number));
        if (latest.transactions[0]) seen.push(latest.transactions[0]);
      }
      for (const hash of seen.slice(-3)) {
        const receipt = await call<{ blockNumber: string } | null>("eth_getTransactionReceipt", [hash]).catch((e: Error) => e);
        if (receipt === null || receipt instanceof Error)
          problems.push(`round ${round}: receipt of ${hash} ${receipt === null ? "null" : receipt.message} after it was seen`);
      }
    }
    expect(seen.length).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });
});
