// One IP cannot take what every client shares (#51): the port's connections (idle sockets from one address
// refused everyone else's) and the memory of bodies still arriving (450 connections each holding a 1 MB body
// took 515 MB). Another client, from another loopback address, is served throughout.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";
import { until } from "../../helpers/until.js";

/** A JSON-RPC call from a given local address (127.0.0.2 is another client to the gateway). */
async function chainIdFrom(port: number, localAddress: string): Promise<number> {
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: "127.0.0.1", localAddress });
    s.on("error", reject);
    s.on("connect", () =>
      s.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`),
    );
    let got = "";
    s.on("data", (d) => (got += d.toString()));
    s.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
  });
}

/**
 * Opens `n` sockets from 127.0.0.1, 200 at a time (more at once overflow the kernel's accept queue, and the
 * rest wait out SYN retries); resolves once each is connected or refused. Refused: answered 503, or closed by
 * the gateway unanswered (past a connection cap, an IP is told 503 a few times a second and then closed at
 * accept).
 */
async function openMany(port: number, n: number, onOpen: (s: net.Socket) => void = () => undefined): Promise<{ sockets: net.Socket[]; refused: () => number }> {
  const sockets: net.Socket[] = [];
  let refused = 0;
  for (let wave = 0; wave < n; wave += 200) await openWave(Math.min(200, n - wave));
  return { sockets, refused: () => refused };

  function openWave(count: number): Promise<unknown> {
    return Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<void>((resolve) => {
            const s = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.1" });
            sockets.push(s);
            let counted = false;
            const refusal = (): void => {
              if (!counted) refused++;
              counted = true;
            };
            s.on("error", () => undefined);
            s.on("data", (d) => {
              if (d.toString().startsWith("HTTP/1.1 503")) refusal();
            });
            s.on("connect", () => {
              onOpen(s);
              resolve();
            });
            s.on("close", () => {
              // Closed by the gateway: this test destroys its sockets only once it is done counting.
              refusal();
              resolve();
            });
          }),
      ),
    );
  }
}

describe("per-IP budgets at the edge", () => {
  let gw: Gateway;
  let port: number;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.http.maxConnections = 1_500;
        c.http.maxConnectionsPerIp = 1_000;
      },
    });
    port = Number(new URL(gw.network("testnet").url).port);
  });
  afterAll(() => gw?.close());

  it("10,000 idle sockets from one IP take at most its share: another IP is served", { timeout: 120_000 }, async () => {
    const { sockets, refused } = await openMany(port, 10_000);
    try {
      await until(() => refused() >= 9_000 - 5, 60_000);
      expect(await chainIdFrom(port, "127.0.0.2")).toBe(200);
      // In a second of its own (this one's 503s may be spent), the IP is told why.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await chainIdFrom(port, "127.0.0.1")).toBe(503);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it("bodies held half-sent by one IP are budgeted: memory stays bounded, another IP is served", { timeout: 60_000 }, async () => {
    const MB = 1024 * 1024;
    // One buffer for every socket: the client's own memory does not grow with the attack.
    const part = Buffer.alloc(MB - 100, 0x20);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const { sockets, refused } = await openMany(port, 450, (s) => {
      s.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${MB}\r\n\r\n`);
      s.write(part);
    });
    try {
      // The per-IP share (32 MB) holds ~32 of them; the rest are refused before their bodies are read.
      await until(() => refused() >= 400, 30_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await chainIdFrom(port, "127.0.0.2")).toBe(200);
      clearInterval(sampler);
      expect(peak - before).toBeLessThan(300 * MB);
    } finally {
      clearInterval(sampler);
      for (const s of sockets) s.destroy();
    }
  });

  it("bodies of no declared length (chunked, as gRPC's have none) are budgeted as they arrive: past the IP's share, the connection is closed", {
    timeout: 60_000,
  }, async () => {
    // 50 connections each sending 900 KB of a chunked body never finished: 45 MB, past the IP's 32 MB share.
    const piece = Buffer.alloc(900 * 1024, 0x20);
    const { sockets } = await openMany(port, 50, (s) => {
      s.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
      s.write(`${piece.length.toString(16)}\r\n`);
      s.write(piece);
      s.write("\r\n");
    });
    try {
      // The share holds ~36 of them; the others are closed rather than held.
      const closed = () => sockets.filter((s) => s.destroyed).length;
      await until(() => closed() >= 10, 10_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(closed()).toBeLessThanOrEqual(16);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});
