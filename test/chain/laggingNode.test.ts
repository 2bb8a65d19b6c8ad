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
import { gatewayCall, logReaders, receiptsSeen, roundsAfterFailover, roundsAtHead } from "../helpers/headFollower.js";

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

  it("over 300 rounds of (head, block at head, logs up to head) with 40 log readers as load: never back, never null, never short", {
    timeout: 120_000,
  }, async () => {
    const call = gatewayCall(url);
    const readers = logReaders(call, EMITTER, 40);
    const problems = await roundsAtHead(call, node, EMITTER, 300).finally(() => readers.stop());
    expect(problems).toEqual([]);
  });

  it("with the level node gone: latest and receipts never go back (200 rounds)", { timeout: 120_000 }, async () => {
    // The gateway has answered the level node's head; from now only the node a block behind is left.
    // Receipts of the newest blocks seen while both answered (those the lagging node lacks came from the other).
    const call = gatewayCall(url);
    const seen = await receiptsSeen(call, 20);
    level.close();
    const problems = await roundsAfterFailover(call, seen, 200);
    expect(seen.length).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });
});
