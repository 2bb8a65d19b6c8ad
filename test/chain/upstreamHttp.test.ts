// The gateway's HTTP client to its nodes (undici underneath), against a scripted raw TCP server: every framing a node
// (or a proxy in front of one) may use, split at awkward points, plus the connection faults it must survive.
import { afterEach, describe, expect, it } from "vitest";
import net from "node:net";
import tls from "node:tls";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UpstreamHttp, UpstreamHttpError } from "../../src/chain/upstreamHttp.js";

interface Received {
  head: string;
  body: string;
}

/**
 * A raw server: `answer` gets each complete request (Content-Length framed, as the client sends) and the
 * socket, and writes whatever bytes it likes.
 */
async function rawServer(answer: (req: Received, socket: net.Socket, index: number) => void, secure?: { key: string; cert: string }) {
  const requests: Received[] = [];
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const onSocket = (socket: net.Socket): void => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let buf = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.toString("latin1", 0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const req = { head, body: buf.toString("utf8", end + 4, end + 4 + length) };
        buf = buf.subarray(end + 4 + length);
        requests.push(req);
        answer(req, socket, requests.length - 1);
      }
    });
  };
  const server = secure ? tls.createServer(secure, onSocket) : net.createServer(onSocket);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  const s = {
    port,
    requests,
    get connections() {
      return connections;
    },
    /** Connections open now. */
    get open() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const sock of sockets) sock.destroy();
        server.close(() => r());
      }),
  };
  servers.push(s);
  return s;
}

const servers: { close(): Promise<void> }[] = [];
const clients: UpstreamHttp[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function client(url: string, options: Partial<ConstructorParameters<typeof UpstreamHttp>[1]> = {}): UpstreamHttp {
  const c = new UpstreamHttp(new URL(url), { connections: 8, timeoutMs: 2_000, ...options });
  clients.push(c);
  return c;
}

/** Writes `bytes` in pieces of `size` bytes, one per event-loop turn, so the client sees every split. */
async function drip(socket: net.Socket, bytes: string, size: number): Promise<void> {
  const buf = Buffer.from(bytes);
  for (let i = 0; i < buf.length; i += size) {
    socket.write(buf.subarray(i, i + size));
    await new Promise((r) => setTimeout(r, 1));
  }
}

const ok = (body: string, extra = ""): string =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("UpstreamHttp", () => {
  it("sends one POST with host, type, length and the URL's path and query; basic auth from the URL", async () => {
    const server = await rawServer((_req, s) => s.write(ok('{"r":1}')));
    const answer = await client(`http://user:p%40ss@127.0.0.1:${server.port}/rpc/v1?x=1`).post('{"q":"é"}');
    expect(answer).toEqual({ status: 200, text: '{"r":1}', sentAt: expect.any(Number) });
    const { head, body } = server.requests[0]!;
    expect(head.split("\r\n")[0]).toBe("POST /rpc/v1?x=1 HTTP/1.1");
    expect(head).toMatch(new RegExp(`\r\nhost: 127\\.0\\.0\\.1:${server.port}\r\n`));
    expect(head).toMatch(/\r\ncontent-type: application\/json\r\n/);
    expect(head).toMatch(/\r\ncontent-length: 10(\r\n|$)/); // bytes, not characters
    expect(head).toContain(`authorization: Basic ${Buffer.from("user:p@ss").toString("base64")}`);
    expect(body).toBe('{"q":"é"}');
  });

  it("reads a Content-Length answer split anywhere, multi-byte characters across splits included", async () => {
    const text = JSON.stringify({ result: "ü€😀".repeat(50) });
    const server = await rawServer((_req, s) => void drip(s, ok(text), 7));
    expect(await client(`http://127.0.0.1:${server.port}`).post("{}")).toEqual({ status: 200, text, sentAt: expect.any(Number) });
  });

  it("reads a chunked answer with extensions and trailers, delivered byte by byte", async () => {
    const server = await rawServer(
      (_req, s) => void drip(s, 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\n{"a":\r\nA\r\n"0123456"}\r\n0\r\nx-trailer: y\r\n\r\n', 1),
    );
    expect(await client(`http://127.0.0.1:${server.port}`).post("{}")).toEqual({ status: 200, text: '{"a":"0123456"}', sentAt: expect.any(Number) });
  });

  it("reads an answer that ends at close (no length), and skips interim 1xx answers", async () => {
    const server = await rawServer((_req, s) => {
      s.write("HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n");
      s.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"until":"close"}');
    });
    const c = client(`http://127.0.0.1:${server.port}`);
    expect(await c.post("{}")).toEqual({ status: 200, text: '{"until":"close"}', sentAt: expect.any(Number) });
    expect(await c.post("{}")).toEqual({ status: 200, text: '{"until":"close"}', sentAt: expect.any(Number) });
    expect(server.connections).toBe(2);
  });

  it("keeps connections alive across sequential requests; Connection: close retires one", async () => {
    const server = await rawServer((req, s) => s.write(ok(req.body, req.body === '"last"' ? "connection: close\r\n" : "")));
    const c = client(`http://127.0.0.1:${server.port}`);
    for (let i = 0; i < 20; i++) expect((await c.post(String(i))).text).toBe(String(i));
    // undici's pool may hand the next request to a second connection before the first is marked free.
    expect(server.connections).toBeLessThanOrEqual(2);
    const before = server.connections;
    expect((await c.post('"last"')).text).toBe('"last"');
    for (let i = 0; i < 100 && server.open >= before; i++) await new Promise((r) => setTimeout(r, 5));
    expect(server.open).toBe(before - 1);
    expect((await c.post('"after"')).text).toBe('"after"');
  });

  it("opens at most `connections` sockets; later requests wait their turn and all are answered", async () => {
    const server = await rawServer((req, s) => setTimeout(() => s.write(ok(req.body)), 20));
    const c = client(`http://127.0.0.1:${server.port}`, { connections: 2 });
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => c.post(String(i))));
    expect(answers.map((a) => a.text)).toEqual(Array.from({ length: 9 }, (_, i) => String(i)));
    expect(server.connections).toBe(2);
  });

  it("a kept-alive connection the node closed unanswered is retried once on a fresh one", async () => {
    // The node answers the first request on each connection, then drops the connection at the next one
    // (a keep-alive timeout racing our reuse).
    const perSocket = new WeakMap<net.Socket, number>();
    const server = await rawServer((req, s) => {
      const n = (perSocket.get(s) ?? 0) + 1;
      perSocket.set(s, n);
      if (n === 1) s.write(ok(req.body));
      else s.destroy();
    });
    const c = client(`http://127.0.0.1:${server.port}`);
    expect((await c.post("1")).text).toBe("1");
    expect((await c.post("2")).text).toBe("2");
    expect(server.connections).toBe(2);
  });

  it("a fresh connection closed unanswered fails the request (no retry loop)", async () => {
    const server = await rawServer((_req, s) => s.destroy());
    const err = await client(`http://127.0.0.1:${server.port}`)
      .post("{}")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).kind).toBe("connection");
    expect(server.connections).toBe(1);
  });

  it("times out a node that never answers, and a refused connection names its cause", async () => {
    const server = await rawServer(() => undefined);
    const started = Date.now();
    const err = (await client(`http://127.0.0.1:${server.port}`, { timeoutMs: 200 })
      .post("{}")
      .catch((e: unknown) => e)) as UpstreamHttpError;
    expect(err.kind).toBe("timeout");
    expect(err.message).toBe("timed out after 200 ms");
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const closed = await rawServer(() => undefined);
    const port = closed.port;
    await closed.close();
    const refused = (await client(`http://127.0.0.1:${port}`)
      .post("{}")
      .catch((e: unknown) => e)) as UpstreamHttpError;
    expect(refused.message).toBe("connection failed: ECONNREFUSED");
  });

  it("a body dripped a byte at a time fails at the timeout, not at the node's pace (#52)", async () => {
    let stop = false;
    const server = await rawServer((_req, s) => {
      s.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n");
      const tick = (): void => {
        if (stop || s.destroyed) return;
        s.write("1");
        setTimeout(tick, 200);
      };
      tick();
    });
    const started = performance.now();
    const err = await client(`http://127.0.0.1:${server.port}`, { timeoutMs: 1_000 })
      .post("{}")
      .catch((e: unknown) => e);
    stop = true;
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).kind).toBe("timeout");
    expect((err as Error).message).toMatch(/timed out after 1000 ms \(the answer was still arriving\)/);
    expect(performance.now() - started).toBeLessThan(1_800);
  });

  it("an answer over maxAnswerBytes fails and its connection is closed, declared or streamed (#52)", async () => {
    const big = `{"result":"${"a".repeat(300_000)}"}`;
    const declared = await rawServer((_req, s) => s.write(ok(big)));
    const chunked = await rawServer((_req, s) => {
      s.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
      for (let i = 0; i < 40; i++) s.write(`2710\r\n${"b".repeat(10_000)}\r\n`);
    });
    for (const server of [declared, chunked]) {
      const c = client(`http://127.0.0.1:${server.port}`, { maxAnswerBytes: 100_000 });
      const err = await c.post("{}").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamHttpError);
      expect((err as UpstreamHttpError).kind).toBe("too_large");
      expect((err as Error).message).toMatch(/exceeds the 100000 byte limit/);
      for (let i = 0; i < 100 && server.open > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(server.open).toBe(0);
    }
    // Under the limit, the same answer is read.
    const small = await rawServer((_req, s) => s.write(ok(big)));
    expect((await client(`http://127.0.0.1:${small.port}`, { maxAnswerBytes: 400_000 }).post("{}")).text).toBe(big);
  });

  it("refuses answers that are not HTTP/1.x, carry extra bytes or bad framing, and recovers afterwards", async () => {
    const bad = ["<html>\r\n\r\n", "HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"];
    const server = await rawServer((req, s) => s.write(req.body === "good" ? ok("fine") : req.body === "junk" ? ok("{}") + "junk" : bad[Number(req.body)]!));
    const c = client(`http://127.0.0.1:${server.port}`, { connections: 1 });
    for (let i = 0; i < bad.length; i++) {
      const err = (await c.post(String(i)).catch((e: unknown) => e)) as UpstreamHttpError;
      expect(err.kind, bad[i]).toBe("protocol");
    }
    expect((await c.post("good")).text).toBe("fine");
    // Bytes after a complete answer: that answer stands, the connection is dropped, and the stray bytes
    // never become (part of) the next request's answer.
    expect((await c.post("junk")).text).toBe("{}");
    expect((await c.post("good")).text).toBe("fine");
    expect((await c.post("good")).text).toBe("fine");
  });

  it("close() lets a request in flight be answered, then closes its connection", async () => {
    const server = await rawServer((req, s) => setTimeout(() => s.write(ok(req.body)), 50));
    const c = client(`http://127.0.0.1:${server.port}`);
    const answer = c.post('"in flight"');
    await new Promise((r) => setTimeout(r, 10));
    c.close();
    expect((await answer).text).toBe('"in flight"');
    for (let i = 0; i < 100 && server.open > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.open).toBe(0);
    await expect(c.post("{}")).rejects.toThrow("client closed");
  });

  it("passes 5xx answers through with their status (the pool decides about failover)", async () => {
    const server = await rawServer((_req, s) => s.write("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\nbusy"));
    expect(await client(`http://127.0.0.1:${server.port}`).post("{}")).toEqual({ status: 503, text: "busy", sentAt: expect.any(Number) });
  });

  it("speaks HTTPS to a node behind TLS", async () => {
    const dir = mkdtempSync(join(tmpdir(), "upstream-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    const cert = readFileSync(join(dir, "cert.pem"), "utf8");
    const server = await rawServer((req, s) => s.write(ok(req.body)), { key: readFileSync(join(dir, "key.pem"), "utf8"), cert });
    const c = client(`https://localhost:${server.port}`, { tls: { ca: cert } });
    expect((await c.post('"over tls"')).text).toBe('"over tls"');
    expect((await c.post('"again"')).text).toBe('"again"');
    expect(server.connections).toBeLessThanOrEqual(2);
    // Without trusting that certificate the connection is refused, with the reason.
    const untrusted = await client(`https://localhost:${server.port}`)
      .post("{}")
      .catch((e: unknown) => e);
    expect((untrusted as UpstreamHttpError).message).toMatch(/^connection failed: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED)/);
  });
});
