// WebSockets and subscriptions per client IP, across its keys (#51): free keys are self-service, so 30 of them
// from one IP held 39,000 subscriptions and took 252 MB/s of notifications. An IP's share holds whichever of
// its keys it uses; another address is unaffected, and a key an operator gave limits of its own is exempt.
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { postJson, startTestGateway } from "../../helpers/gateway.js";

/** Opens a socket (from `localAddress`); resolves with it, or with the HTTP status that refused the upgrade. */
function open(url: string, localAddress = "127.0.0.1"): Promise<WebSocket | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { localAddress });
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("error", () => resolve(0));
  });
}

/** One eth_subscribe newHeads; its result or error. */
function subscribe(ws: WebSocket, id: number): Promise<{ result?: string; error?: { code: number; message: string } }> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData): void => {
      const msg = JSON.parse(String(data)) as { id?: number; result?: string; error?: { code: number; message: string } };
      if (msg.id !== id) return;
      ws.off("message", onMessage);
      resolve(msg);
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: "eth_subscribe", params: ["newHeads"] }));
  });
}

describe("WebSocket budgets per client IP", () => {
  let gw: Gateway;
  let ws: string;
  const sockets: WebSocket[] = [];
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.websocket.maxSocketsPerIp = 5;
        c.websocket.maxSubscriptionsPerIp = 8;
        c.websocket.shards = 0;
      },
    });
    ws = gw.network("testnet").url.replace(/^http/, "ws");
  });
  afterAll(async () => {
    for (const s of sockets) s.terminate();
    await gw?.close();
  });

  it("free keys from one IP share its sockets and subscriptions; another IP and a raised key are not held", async () => {
    const base = gw.network("testnet").url;
    const keys = await Promise.all(Array.from({ length: 3 }, async () => ((await postJson(base + "/portal/keys", {})).json as { apiKey: string }).apiKey));
    // Five sockets over three keys and the public path: the IP's share.
    for (const path of [`/zgt/${keys[0]}`, `/zgt/${keys[1]}`, `/zgt/${keys[2]}`, "/", `/zgt/${keys[0]}`]) {
      const s = await open(ws + path);
      expect(s).toBeInstanceOf(WebSocket);
      sockets.push(s as WebSocket);
    }
    expect(await open(`${ws}/zgt/${keys[1]}`)).toBe(429);
    // Eight subscriptions across those sockets; the ninth is refused whichever socket asks.
    for (let i = 0; i < 8; i++) expect((await subscribe(sockets[i % 5]!, i)).result).toMatch(/^0x/);
    const ninth = await subscribe(sockets[3]!, 99);
    expect(ninth.error?.code).toBe(-32005);
    expect(ninth.error?.message).toMatch(/at most 8 subscriptions per client address/);
    // Another address has its own share.
    const other = await open(`${ws}/zgt/${keys[2]}`, "127.0.0.2");
    expect(other).toBeInstanceOf(WebSocket);
    sockets.push(other as WebSocket);
    // A key an operator gave its own limits is not held to the address's share.
    const raised = await gw.keys.create({ requestsPerMinute: 6_000 });
    const raisedSocket = await open(`${ws}/zgt/${raised.apiKey}`);
    expect(raisedSocket).toBeInstanceOf(WebSocket);
    sockets.push(raisedSocket as WebSocket);
    // Closing a socket gives its place and its subscriptions back.
    const closed = sockets.shift()!;
    await new Promise<void>((r) => {
      closed.once("close", () => r());
      closed.close();
    });
    await new Promise((r) => setTimeout(r, 100));
    const again = await open(`${ws}/zgt/${keys[1]}`);
    expect(again).toBeInstanceOf(WebSocket);
    sockets.push(again as WebSocket);
    expect((await subscribe(again as WebSocket, 200)).result).toMatch(/^0x/);
  });
});
