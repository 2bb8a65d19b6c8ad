// What a WebSocket keeps for its whole life (hours, at 10,000 subscribers a gateway): not the upgrade request,
// and not the first bytes its connection was told apart by. Each was held by a listener made in the scope that
// had them (listen.ts's first read, the fast lane's state, the endpoint's upgrade): ~2.5 KB of heap a socket.
import http from "node:http";
import net from "node:net";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Gateway } from "../../../src/gateway.js";
import { FAKE_CHAIN_ID, type FakeNode, startFakeNode } from "../../helpers/fakeNode.js";
import { startTestGateway } from "../../helpers/gateway.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

describe("an open WebSocket", () => {
  let node: FakeNode;
  let gw: Gateway;
  beforeAll(async () => {
    node = await startFakeNode({ chainId: FAKE_CHAIN_ID });
    gw = await startTestGateway({ mutate: (c) => void (c.networks[0]!.upstreams = [node.url]) });
  });
  afterAll(async () => {
    await gw?.close();
    node?.close();
  });

  it("keeps neither its upgrade request nor the bytes first read from it", async () => {
    const requests: WeakRef<object>[] = [];
    const firstBytes: WeakRef<object>[] = [];
    const emit = http.Server.prototype.emit;
    const unshift = net.Socket.prototype.unshift;
    // Watched where the gateway hands them on: node:http's "upgrade" event, and the bytes read before node:http
    // took the connection (put back for it to parse).
    http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
      if (event === "upgrade") requests.push(new WeakRef(args[0] as object));
      return Reflect.apply(emit, this, [event, ...args]) as boolean;
    } as typeof emit;
    net.Socket.prototype.unshift = function (this: net.Socket, chunk: Buffer, encoding?: BufferEncoding): void {
      if (Buffer.isBuffer(chunk) && chunk.length > 0) firstBytes.push(new WeakRef(chunk));
      unshift.call(this, chunk, encoding);
    } as typeof unshift;
    const sockets: WebSocket[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const ws = new WebSocket(gw.network("testnet").url.replace("http://", "ws://"));
        await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
        sockets.push(ws);
      }
    } finally {
      http.Server.prototype.emit = emit;
      net.Socket.prototype.unshift = unshift;
    }
    // A subscription too, so the sockets have done what a subscriber does.
    for (const ws of sockets) ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    await Promise.all(sockets.map((ws) => new Promise((resolve) => ws.once("message", resolve))));
    await new Promise((r) => setTimeout(r, 50)); // out of the job that made the WeakRefs
    gc();
    expect(requests.length).toBe(10);
    expect(firstBytes.length).toBeGreaterThanOrEqual(10);
    expect(sockets.every((ws) => ws.readyState === WebSocket.OPEN)).toBe(true);
    expect(requests.filter((r) => r.deref() !== undefined).length).toBe(0);
    expect(firstBytes.filter((r) => r.deref() !== undefined).length).toBe(0);
    for (const ws of sockets) ws.close();
  });
});
