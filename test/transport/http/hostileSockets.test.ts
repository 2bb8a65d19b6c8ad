// Hostile connections against a real gateway (#28): a junk stream behind a pending request, silent sockets,
// a partial h2 preface, heads trickled a byte at a time (fast lane and node:http), idle keep-alives, and more
// connections than the cap. Each is bounded by a configured limit, and other clients keep their latency.
import { once } from "node:events";
import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startEmbeddedNode, type EmbeddedNode } from "../../../src/chain/embeddedNode.js";
import { postJson, startTestGateway } from "../../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../../helpers/faultyUpstream.js";
import { until } from "../../helpers/until.js";

const HEADERS_TIMEOUT_MS = 1_500;
const KEEP_ALIVE_MS = 2_000;
const MAX_CONNECTIONS = 40;

const rpc = (method: string, params: unknown[] = []): string => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const post = (body: string): string =>
  `POST / HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

interface Watched {
  socket: net.Socket;
  received: () => string;
  /** Resolves with ms from connect to close. */
  closed: Promise<number>;
}

function open(port: number): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (d: Buffer) => (data += d.toString("latin1")));
    const closed = new Promise<number>((r) => socket.once("close", () => r(Date.now() - started)));
    socket.on("error", () => undefined);
    socket.once("connect", () => resolve({ socket, received: () => data, closed }));
    socket.once("error", reject);
  });
}

async function p99(url: string, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await postJson(url, { jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] });
    expect(res.status).toBe(200);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n * 0.99) - 1]!;
}

describe("hostile connections", () => {
  let gw: Gateway;
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let port: number;
  let url: string;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 1, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.http = {
          ...c.http,
          headersTimeoutMs: HEADERS_TIMEOUT_MS,
          requestTimeoutMs: 4_000,
          keepAliveTimeoutMs: KEEP_ALIVE_MS,
          maxConnections: MAX_CONNECTIONS,
        };
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    url = gw.network("testnet").url;
    port = Number(new URL(url).port);
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  it("a junk stream behind a pending request is held back by the socket, not buffered; others keep their p99", { timeout: 60_000 }, async () => {
    const before = await p99(url, 200);
    // eth_getBalance is answered after 6 s: the request stays pending while junk follows on its socket.
    proxy.slow(6_000, /eth_getBalance/);
    const attacker = await open(port);
    attacker.socket.write(post(rpc("eth_getBalance", ["0x000000000000000000000000000000000000dEaD", "latest"])));
    await new Promise((r) => setTimeout(r, 200));
    const junk = Buffer.alloc(1024 * 1024, 0x41);
    // For 4 s the attacker keeps 4 MB queued on its side; whatever the gateway reads leaves that queue.
    const flood = (async () => {
      const until = Date.now() + 4_000;
      while (Date.now() < until && !attacker.socket.destroyed) {
        if (attacker.socket.writableLength < 4 * 1024 * 1024) attacker.socket.write(junk);
        // events.once takes its listener off when the 50 ms run out (a raced `once` left one per wait).
        else await once(attacker.socket, "drain", { signal: AbortSignal.timeout(50) }).catch(() => undefined);
      }
    })();
    const during = await p99(url, 200);
    await flood;
    // What left the attacker's process while its request was pending: kernel socket buffers and at most one
    // read-ahead in the gateway (the old lane took it all: tens of MB, one Buffer.concat per chunk).
    const accepted = attacker.socket.bytesWritten;
    const stillPending = attacker.received() === "";
    proxy.slow(0, /$^/);
    attacker.socket.destroy();
    expect(stillPending).toBe(true);
    expect(accepted).toBeLessThan(12 * 1024 * 1024);
    expect(during).toBeLessThan(Math.max(2 * before, before + 20));
  });

  it("silent sockets and a partial h2 preface are closed after the headers timeout", async () => {
    const silent = await Promise.all(Array.from({ length: 10 }, () => open(port)));
    const preface = await open(port);
    preface.socket.write("PRI * HTTP/2.0\r\n\r\n");
    const times = await Promise.all([...silent, preface].map((s) => s.closed));
    for (const t of times) {
      expect(t).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
      expect(t).toBeLessThan(HEADERS_TIMEOUT_MS + 1_500);
    }
  });

  it("h2: a session may hold at most 100 streams at once; a stream whose body trickles in without end is cancelled after the request timeout", {
    timeout: 20_000,
  }, async () => {
    const session = http2.connect(url);
    session.on("error", () => undefined);
    await new Promise<void>((resolve) => session.once("remoteSettings", () => resolve()));
    expect(session.remoteSettings.maxConcurrentStreams).toBe(100);
    // A gRPC frame announcing 100 KB, trickled a byte every 400 ms: never idle long enough for the stream's
    // inactivity timeout (the keep-alive timeout, 2 s), never whole.
    const started = Date.now();
    const stream = session.request({
      ":method": "POST",
      ":path": "/chaingateway.rpc.v1.RpcService/GetChainId",
      "content-type": "application/grpc",
      te: "trailers",
    });
    stream.on("error", () => undefined);
    stream.resume();
    stream.write(Buffer.from([0, 0, 1, 0x86, 0xa0]));
    const pings = setInterval(() => !stream.closed && stream.write(Buffer.from([0x0a])), 400);
    try {
      const closedAfter = await new Promise<number>((resolve) => stream.once("close", () => resolve(Date.now() - started)));
      expect(closedAfter).toBeGreaterThanOrEqual(4_000 - 100);
      expect(closedAfter).toBeLessThan(4_000 + 2_000);
      expect(session.destroyed).toBe(false); // the stream went, not the session
    } finally {
      clearInterval(pings);
      session.destroy();
    }
  });

  it("a head trickled a byte at a time gets 408 after the headers timeout, in the fast lane and in node:http", async () => {
    const heads = ["POST / HTTP/1.1\r\nHost: gw\r\nX-Slow: ", "GET /readyz HTTP/1.1\r\nHost: gw\r\nX-Slow: "];
    const results = await Promise.all(
      heads.map(async (head) => {
        const s = await open(port);
        s.socket.write(head);
        const drip = setInterval(() => s.socket.writable && s.socket.write("a"), 200);
        const ms = await s.closed;
        clearInterval(drip);
        return { ms, answer: s.received() };
      }),
    );
    for (const r of results) {
      expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(r.ms).toBeLessThan(HEADERS_TIMEOUT_MS + 1_500);
    }
  });

  it("an idle keep-alive connection is closed after the keep-alive timeout", async () => {
    const s = await open(port);
    s.socket.write(post(rpc("eth_chainId")));
    const ms = await s.closed;
    expect(s.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(ms).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 100);
    expect(ms).toBeLessThan(KEEP_ALIVE_MS + 1_500);
  });

  it("past the connection cap new connections get a clear 503; once the hogs time out, clients are served", async () => {
    const hogs = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => open(port)));
    await new Promise((r) => setTimeout(r, 100));
    const late = await open(port);
    await late.closed;
    expect(late.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(late.received()).toMatch(/too many open connections/);
    await Promise.all(hogs.map((h) => h.closed));
    const res = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    expect(res.status).toBe(200);
  });
});

describe("connections the gateway is done with are closed, not half-closed", () => {
  let gw: Gateway | undefined;
  let port: number;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.http = { ...c.http, headersTimeoutMs: 500, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 5_000, maxConnections: 1 };
      },
    });
    url = gw.network("testnet").url;
    port = Number(new URL(url).port);
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** A client that never ends its side: it keeps the connection after the gateway's answer. */
  function halfOpen(): Promise<{ socket: net.Socket; received: () => string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
      let data = "";
      socket.on("data", (d: Buffer) => (data += d.toString("latin1")));
      socket.on("error", () => undefined);
      socket.once("connect", () => resolve({ socket, received: () => data }));
      socket.once("error", reject);
    });
  }
  it("a head answered 408 frees its connection slot though the client keeps its side open", async () => {
    const slow = await halfOpen();
    slow.socket.write("POST / HTTP/1.1\r\nHost: gw\r\n");
    await until(() => slow.received().length > 0);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    // The cap is one connection: the next client is served only if the 408'd one was let go.
    await new Promise((r) => setTimeout(r, 100));
    const res = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    expect(res.status).toBe(200);
    slow.socket.destroy();
  });

  it("a connection refused at the cap is closed though the client keeps its side open; the gateway's close does not wait on it", async () => {
    const hog = await halfOpen();
    await new Promise((r) => setTimeout(r, 100));
    const late = await halfOpen();
    await until(() => late.received().length > 0);
    expect(late.received()).toMatch(/^HTTP\/1\.1 503 /);
    const started = Date.now();
    const closing = gw!.close();
    gw = undefined;
    await closing;
    expect(Date.now() - started).toBeLessThan(5_000);
    hog.socket.destroy();
    late.socket.destroy();
  });
});
