// writeTextFrame's bytes, read by a real WebSocket client (ws) as the server would send them: every length class of
// RFC 6455's header (7-bit, 16-bit, 64-bit), multi-byte UTF-8, and frames interleaved with ws's own.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { writeTextFrame } from "../../../src/transport/websocket/textFrame.js";

let server: http.Server;
let url: string;
/** The server side of the latest connection: ws's socket object and the raw socket under it. */
let latest: Promise<{ ws: WebSocket; socket: Duplex }>;

beforeAll(async () => {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  let opened: (s: { ws: WebSocket; socket: Duplex }) => void = () => undefined;
  server = http.createServer();
  server.on("upgrade", (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => opened({ ws, socket }));
  });
  latest = new Promise((resolve) => {
    opened = resolve;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("writeTextFrame", () => {
  it("is read back whole by a WebSocket client, for every header length, in order with ws's own frames", async () => {
    const client = new WebSocket(url);
    const received: string[] = [];
    const texts = [
      "",
      "x".repeat(125),
      "y".repeat(126),
      "z".repeat(0xffff),
      "w".repeat(0x10000),
      `{"jsonrpc":"2.0","result":"héllo ✓ 😀"}`,
      "é".repeat(100), // 100 characters, 200 bytes: the 16-bit length form, sized by bytes
      "a".repeat(70_000),
      "ü".repeat(40_000), // 80,000 bytes: the 64-bit length form
    ];
    const all = new Promise<void>((resolve) => {
      client.on("message", (data, isBinary) => {
        expect(isBinary).toBe(false);
        received.push(String(data));
        if (received.length === 2 * texts.length + 1) resolve();
      });
    });
    await new Promise((resolve) => client.once("open", resolve));
    const { ws, socket } = await latest;
    for (const [i, text] of texts.entries()) {
      writeTextFrame(socket, text);
      if (i === 2) ws.send("from ws"); // ws's own send between two of ours
    }
    // With the length given, as the hub gives a notification's (counted once for all its subscribers).
    for (const text of texts) writeTextFrame(socket, text, Buffer.byteLength(text));
    await all;
    expect(received).toEqual([...texts.slice(0, 3), "from ws", ...texts.slice(3), ...texts]);
    client.close();
  });
});
