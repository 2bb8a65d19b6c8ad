// frameWriter's bytes, read by a real WebSocket client (ws) as the server would send them: every length class of
// RFC 6455's header (7-bit, 16-bit, 64-bit), multi-byte UTF-8, frames interleaved with ws's own, and the write
// straight to the kernel with its hand-over to the socket's stream when the kernel's buffer is full.
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { newSubscriptionId } from "../../../src/live/subscriptions.js";
import { frameWriter } from "../../../src/transport/websocket/textFrame.js";

/** A stand-in for a shard: takes a socket and writes frames to it with frameWriter, then says what it queued. */
const HANDED_OVER = `
process.on("message", async ({ module, frames }, socket) => {
  const { frameWriter } = await import(module);
  const writer = frameWriter(socket);
  for (let i = 0; i < frames; i++) writer.text(String(i).padStart(6, "0") + ":" + "n".repeat(1740), 1747);
  process.send({ queued: socket.writableLength });
});
`;

let server: http.Server;
let url: string;
/** The server side of the latest connection: ws's socket object and the raw socket under it. */
let next: () => Promise<{ ws: WebSocket; socket: Duplex }>;

const clients: WebSocket[] = [];

/** A client connected to the test server, and the server's side of it. */
async function connect(): Promise<{ client: WebSocket; ws: WebSocket; socket: Duplex }> {
  const serverSide = next();
  const client = new WebSocket(url);
  clients.push(client);
  await new Promise((resolve) => client.once("open", resolve));
  return { client, ...(await serverSide) };
}

beforeAll(async () => {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  let opened: (s: { ws: WebSocket; socket: Duplex }) => void = () => undefined;
  server = http.createServer();
  server.on("upgrade", (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => opened({ ws, socket }));
  });
  next = () =>
    new Promise((resolve) => {
      opened = resolve;
    });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const client of clients) client.terminate(); // a failed test's too (one may be paused)
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("frameWriter", () => {
  it("is read back whole by a WebSocket client, for every header length, in order with ws's own frames", async () => {
    const { client, ws, socket } = await connect();
    const writer = frameWriter(socket);
    const write = writer.text.bind(writer);
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
    for (const [i, text] of texts.entries()) {
      write(text);
      if (i === 2) ws.send("from ws"); // ws's own send between two of ours
    }
    // With the length given, as for an answer whose length is known.
    for (const text of texts) write(text, Buffer.byteLength(text));
    await all;
    expect(received).toEqual([...texts.slice(0, 3), "from ws", ...texts.slice(3), ...texts]);
    client.close();
  });

  it("writes past an empty stream straight to the kernel", async () => {
    const { client, socket } = await connect();
    const got = new Promise((resolve) => client.once("message", (data) => resolve(String(data))));
    const before = (socket as Socket).bytesWritten;
    frameWriter(socket).text("straight");
    expect(await got).toBe("straight");
    // Node's stream counts what passes through it: nothing did.
    expect((socket as Socket).bytesWritten).toBe(before);
    client.close();
  });

  it("hands what the kernel does not take to the stream, and keeps every frame whole and in order", async () => {
    const { client, socket } = await connect();
    const writer = frameWriter(socket);
    const write = writer.text.bind(writer);
    client.pause(); // a consumer that does not read: the kernel's buffers fill, then the stream's
    const frames = 8_000; // ~14 MB, past what loopback's socket buffers hold
    const text = (i: number): string => `${String(i).padStart(6, "0")}:${"n".repeat(1_740)}`;
    for (let i = 0; i < frames; i++) write(text(i), 1_747);
    expect(socket.writableLength).toBeGreaterThan(0);
    const received: string[] = [];
    const all = new Promise<void>((resolve) => {
      client.on("message", (data) => {
        received.push(String(data));
        if (received.length === frames + 1) resolve();
      });
    });
    client.resume();
    // Once the stream has drained, writes go straight to the kernel again, behind it.
    await new Promise((resolve) => socket.once("drain", resolve));
    const before = (socket as Socket).bytesWritten;
    write("after");
    await all;
    expect((socket as Socket).bytesWritten).toBe(before);
    expect(received.length).toBe(frames + 1);
    for (let i = 0; i < frames; i++) if (received[i] !== text(i)) expect.fail(`frame ${i} is ${received[i]?.slice(0, 12)}…`);
    expect(received[frames]).toBe("after");
    client.close();
  });

  it("never blocks on a socket handed to another process (a shard's): a full kernel buffer goes to the stream there too", async () => {
    const { client, socket } = await connect();
    client.pause();
    // The child writes as a shard does, on the descriptor it was given: were that descriptor blocking, its
    // writeSync would wait for this paused client and the child would never answer.
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", HANDED_OVER], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    try {
      const frames = 8_000;
      const answer = new Promise<{ queued: number }>((resolve) => child.once("message", (m) => resolve(m as { queued: number })));
      child.send({ module: new URL("../../../src/transport/websocket/textFrame.ts", import.meta.url).href, frames }, socket as Socket);
      expect((await answer).queued).toBeGreaterThan(0);
      const received: string[] = [];
      const all = new Promise<void>((resolve) => {
        client.on("message", (data) => {
          received.push(String(data));
          if (received.length === frames) resolve();
        });
      });
      client.resume();
      await all;
      for (let i = 0; i < frames; i++) if (received[i] !== `${String(i).padStart(6, "0")}:${"n".repeat(1_740)}`) expect.fail(`frame ${i}`);
    } finally {
      child.kill();
      socket.destroy(); // this process's side, which the server still counts
    }
  });

  it("frames a block's notification once for its subscribers, each with its own id, also when one of them lags", async () => {
    const [a, b] = [await connect(), await connect()];
    const [writeA, writeB] = [frameWriter(a.socket), frameWriter(b.socket)];
    const [idA, idB] = [newSubscriptionId(), newSubscriptionId()];
    a.client.pause(); // A's frames end up queued in its stream, behind B's writes of the same block's frame
    const results = Array.from({ length: 8_000 }, (_, i) => {
      const text = JSON.stringify({ number: `0x${i.toString(16)}`, extraData: i % 2 ? "héllo ✓ 😀".repeat(100) : "x".repeat(1_600) });
      return { text, bytes: Buffer.byteLength(text) };
    });
    const receive = (client: WebSocket): Promise<string[]> =>
      new Promise((resolve) => {
        const got: string[] = [];
        client.on("message", (data) => {
          got.push(String(data));
          if (got.length === results.length) resolve(got);
        });
      });
    const [gotA, gotB] = [receive(a.client), receive(b.client)];
    for (const r of results) {
      writeA.notification(idA, r);
      writeB.notification(idB, r);
    }
    expect(a.socket.writableLength).toBeGreaterThan(0);
    a.client.resume();
    for (const [got, id] of [
      [await gotA, idA],
      [await gotB, idB],
    ] as const) {
      expect(got.map((text) => JSON.parse(text))).toEqual(
        results.map((r) => ({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: id, result: JSON.parse(r.text) } })),
      );
    }
    // A large result is not kept as a frame: it is framed for each subscriber.
    const big = JSON.stringify({ data: "ü".repeat(40_000) });
    const gotBig = new Promise((resolve) => b.client.once("message", (data) => resolve(JSON.parse(String(data)))));
    writeB.notification(idB, { text: big, bytes: Buffer.byteLength(big) });
    expect(await gotBig).toEqual({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: idB, result: JSON.parse(big) } });
  });
});
