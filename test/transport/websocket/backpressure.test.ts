// A socket that sends faster than its messages are answered (#32, "a hostile socket must hurt no one"): the
// gateway stops reading it once its unanswered messages pass the bound, so what waits is bounded (on a shard,
// the IPC queue to the gateway too), and reads it again as answers go out. In the gateway's process and on a
// fan-out shard, in front of a node that holds its answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Gateway } from "../../../src/gateway.js";
import { FAKE_CHAIN_ID, type FakeNode, startFakeNode } from "../../helpers/fakeNode.js";
import { startTestGateway } from "../../helpers/gateway.js";

const BOUND = 256 * 1024;
/** One eth_getBalance of its own address (no two coalesce), padded with JSON whitespace to 128 KB. */
const message = (i: number): string =>
  JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_getBalance", params: [`0x${i.toString(16).padStart(40, "0")}`, "latest"] }) + " ".repeat(128 * 1024);

describe.each([
  { where: "in the gateway's process", shards: 0, socketsInProcess: 1_000 },
  { where: "on a fan-out shard", shards: 1, socketsInProcess: 0 },
])("a client that outruns its answers, socket $where", ({ shards, socketsInProcess }) => {
  let node: FakeNode;
  let gw: Gateway;
  beforeAll(async () => {
    node = await startFakeNode({ chainId: FAKE_CHAIN_ID });
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [node.url];
        c.websocket.shards = shards;
        c.websocket.socketsInProcess = socketsInProcess;
        c.websocket.maxBufferedBytes = BOUND;
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    node?.close();
  });

  it("is not read past the bound while its answers wait, and is read again (every message answered) after", async () => {
    node.hold = true;
    const ws = new WebSocket(gw.network("testnet").url.replace("http://", "ws://"));
    const answers = new Set<number>();
    ws.on("message", (data) => answers.add((JSON.parse(String(data)) as { id: number }).id));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    // 200 × 128 KB = 25 MB: more than loopback's socket buffers hold, so the client sees the gateway stop.
    const total = 200;
    for (let i = 0; i < total; i++) ws.send(message(i));
    await new Promise((r) => setTimeout(r, 1_500));
    const asked = node.requests.flat().filter((m) => m === "eth_getBalance").length;
    // The bound is 2 messages' worth: the third is read, then the socket is not, until answers go out.
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(3);
    expect(ws.bufferedAmount).toBeGreaterThan(0);
    node.hold = false;
    const deadline = Date.now() + 30_000;
    while (answers.size < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(answers.size).toBe(total);
    ws.close();
  });
});
