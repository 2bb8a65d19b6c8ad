// The live feed wakes on the node's own new-heads WebSocket (#32: "the upstream's own WebSocket where it has
// one"): with a poll period far longer than the block time, a newHeads subscriber still gets every block as
// it is mined, each once and in order. The embedded anvil's WebSocket is used by itself.
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

describe("head feed woken by the node's WebSocket", () => {
  let gw: Gateway;
  beforeAll(async () => {
    // Blocks every 0.25 s; the feed would poll only every 20 s.
    gw = await startTestGateway({ mutate: (c) => (c.websocket.headPollMs = 20_000) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("a newHeads subscriber gets each block as it is mined, not at the next poll", { timeout: 20_000 }, async () => {
    const ws = new WebSocket(gw.network("testnet").url.replace(/^http/, "ws"));
    const heads: number[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] })));
      ws.on("error", reject);
      ws.on("message", (data) => {
        const msg = JSON.parse(String(data)) as { method?: string; params?: { result: { number: string } } };
        if (msg.method !== "eth_subscription") return;
        heads.push(Number.parseInt(msg.params!.result.number, 16));
        if (heads.length === 6) resolve();
      });
      setTimeout(() => reject(new Error(`only ${heads.length} heads in 5 s`)), 5_000);
    });
    ws.close();
    for (let i = 1; i < heads.length; i++) expect(heads[i]).toBe(heads[i - 1]! + 1);
  });
});
