// WebSocket slow readers, bounded per client address (#62): 50 sockets x 100 newHeads subscriptions from 5
// addresses that never read held up to 4 MB each (200 MB) until each socket passed its own bound; RSS grew
// 92 MB and stayed. Each address's sockets now share one bound of unsent bytes per process that holds them
// (the gateway, each fan-out shard): past it the address's slowest socket is closed (counted, share=address),
// while a reader from another address keeps its heads.
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";
import { until } from "../../helpers/until.js";

const ADDRESSES = ["127.0.0.41", "127.0.0.42", "127.0.0.43", "127.0.0.44", "127.0.0.45"];
const SOCKETS_PER_ADDRESS = 10;
const SHARE = 1024 * 1024;

async function open(url: string, localAddress: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { localAddress });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return ws;
}

/** 100 newHeads subscriptions in batches of 40, answered; then the socket is never read again. */
async function subscribeAndStopReading(ws: WebSocket): Promise<void> {
  for (const n of [40, 40, 20]) {
    const answered = new Promise((resolve) => ws.once("message", resolve));
    ws.send(JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_subscribe", params: ["newHeads"] }))));
    await answered;
  }
  (ws as unknown as { _socket: Socket })._socket.pause();
}

const closes = async (url: string, share: string): Promise<number> =>
  Number(
    new RegExp(`gateway_websocket_slow_consumer_closes_total\\{network="testnet",share="${share}"\\} (\\d+)`).exec(
      await (await fetch(`${url}/metrics`)).text(),
    )?.[1] ?? 0,
  );

describe.each([
  ["in the gateway's process", 1_000],
  ["on a fan-out shard", 0],
])("WebSocket slow readers from 5 addresses, %s", (_where, socketsInProcess) => {
  let gw: Gateway;
  let url: string;
  const sockets: WebSocket[] = [];
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.websocket.maxBufferedBytesPerIp = SHARE;
        c.websocket.socketsInProcess = socketsInProcess;
        c.websocket.shards = socketsInProcess === 0 ? 1 : 0;
      },
    });
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    await gw?.close();
  });

  it("each address's slowest sockets are closed past its share (counted); a reader elsewhere keeps its heads", { timeout: 90_000 }, async () => {
    const wsUrl = url.replace("http", "ws");
    const reader = await open(wsUrl, "127.0.0.46");
    sockets.push(reader);
    let heads = 0;
    reader.on("message", (data: Buffer) => {
      if (data.toString().includes('"eth_subscription"')) heads++;
    });
    reader.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sample = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);
    try {
      const attackers = await Promise.all(
        ADDRESSES.flatMap((ip) =>
          Array.from({ length: SOCKETS_PER_ADDRESS }, async () => {
            const ws = await open(wsUrl, ip);
            sockets.push(ws);
            await subscribeAndStopReading(ws);
            return ws;
          }),
        ),
      );
      // Every address passes its share (10 sockets x 100 heads a block, unread): its slowest sockets go.
      await until(async () => (await closes(url, "address")) >= ADDRESSES.length, 60_000);
      const headsBefore = heads;
      await new Promise((r) => setTimeout(r, 2_000));
      expect(heads, "the reader on another address still gets heads").toBeGreaterThan(headsBefore);
      expect(reader.readyState).toBe(WebSocket.OPEN);
      // The address share fired before any one socket reached its own 4 MB bound.
      expect(await closes(url, "socket")).toBe(0);
      console.log(
        `address closes ${await closes(url, "address")} of ${attackers.length} sockets; test process RSS ${Math.round(rssBefore / 2 ** 20)} -> peak ${Math.round(rssPeak / 2 ** 20)} MB`,
      );
      if (socketsInProcess > 0) expect(rssPeak - rssBefore).toBeLessThan(100 * 2 ** 20);
    } finally {
      clearInterval(sample);
    }
  });
});
