// The HTTP/1.1 fast lane, over raw sockets: what it takes it answers exactly as node:http would (in order,
// pipelined, byte-exact lengths); everything else moves the connection to node:http mid-stream, losing nothing.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const rpc = (id: number, method: string, params: unknown[] = []): string => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const post = (body: string, extra = "", path = "/"): string =>
  `POST ${path} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/**
 * Parses complete HTTP/1.1 responses off the front of `buf` (Content-Length, chunked, or bodiless); with
 * `closed`, a response with neither length nor chunking runs to the end (HTTP/1.0).
 */
function parseResponses(buf: Buffer, closed = false): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  for (;;) {
    const headEnd = buf.indexOf("\r\n\r\n");
    if (headEnd < 0) break;
    const [statusLine, ...lines] = buf.toString("latin1", 0, headEnd).split("\r\n");
    const status = Number(statusLine!.split(" ")[1]);
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
    let offset = headEnd + 4;
    let body: Buffer;
    if (status === 204 || status === 100 || status === 304) body = Buffer.alloc(0);
    else if (headers["transfer-encoding"] === "chunked") {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buf.indexOf("\r\n", offset);
        if (lineEnd < 0) return { responses, rest: buf };
        const size = parseInt(buf.toString("latin1", offset, lineEnd), 16);
        if (buf.length < lineEnd + 2 + size + 2) return { responses, rest: buf };
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        offset = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else if (headers["content-length"] === undefined) {
      if (!closed) break;
      body = buf.subarray(offset);
      offset = buf.length;
    } else {
      const length = Number(headers["content-length"]);
      if (buf.length < offset + length) break;
      body = buf.subarray(offset, offset + length);
      offset += length;
    }
    responses.push({ status, headers, body: body.toString("utf8") });
    buf = buf.subarray(offset);
  }
  return { responses, rest: buf };
}

/** Sends `chunks` (with `gapMs` between them) on one connection and collects `count` responses. */
async function exchange(port: number, chunks: (string | Buffer)[], count: number, gapMs = 0): Promise<RawResponse[]> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const got: RawResponse[] = [];
  let buf: Buffer = Buffer.alloc(0);
  const done = new Promise<RawResponse[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${count} responses: ${JSON.stringify(got)}`)), 10_000);
    const finish = (): void => {
      clearTimeout(timer);
      resolve(got);
    };
    socket.on("data", (d: Buffer) => {
      const parsed = parseResponses(Buffer.concat([buf, d]));
      buf = parsed.rest;
      // Interim 100 Continue answers are not counted.
      got.push(...parsed.responses.filter((r) => r.status !== 100));
      if (got.length >= count) finish();
    });
    socket.on("close", () => {
      got.push(...parseResponses(buf, true).responses.filter((r) => r.status !== 100));
      finish();
    });
  });
  for (const c of chunks) {
    socket.write(c);
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
  }
  try {
    return await done;
  } finally {
    socket.destroy();
  }
}

/**
 * CPU this process may spend on the piecewise body, client and server: 244 ms measured, 1,319 ms before the
 * lane gathered a body once whole (CPU time, which a loaded machine inflates far less than wall time).
 */
const COPY_CPU_MS = 700;

describe("HTTP/1.1 fast lane", () => {
  let gw: Gateway;
  let port: number;
  beforeAll(async () => {
    gw = await startTestGateway();
    port = Number(new URL(gw.network("testnet").url).port);
  });
  afterAll(() => gw?.close());

  it("answers pipelined requests in order, each with its own id, keeping the connection", async () => {
    const [a, b, c] = await exchange(port, [post(rpc(1, "eth_chainId")) + post(rpc(2, "eth_blockNumber")) + post(rpc(3, "net_version"))], 3);
    expect(JSON.parse(a!.body)).toEqual({ jsonrpc: "2.0", id: 1, result: "0x133edcb" });
    expect(JSON.parse(b!.body)).toMatchObject({ jsonrpc: "2.0", id: 2, result: expect.stringMatching(/^0x[0-9a-f]+$/) });
    expect(JSON.parse(c!.body)).toEqual({ jsonrpc: "2.0", id: 3, result: "20180427" });
    for (const r of [a, b, c]) {
      expect(r!.status).toBe(200);
      expect(r!.headers["content-type"]).toBe("application/json");
      expect(r!.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(r!.headers["x-ratelimit-limit"]).toBe("1500");
      expect(r!.headers.connection).toBe("keep-alive");
      expect(r!.headers.date).toBeDefined();
    }
  });

  it("hands the connection to node:http at the first request it does not take, mid-pipeline, losing no bytes", async () => {
    const rs = await exchange(port, [post(rpc(1, "eth_chainId")) + "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n" + post(rpc(2, "eth_chainId"))], 3);
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(rs[0]!.body).id).toBe(1);
    expect(JSON.parse(rs[1]!.body)).toEqual({ status: "ok" });
    expect(JSON.parse(rs[2]!.body)).toEqual({ jsonrpc: "2.0", id: 2, result: "0x133edcb" });
  });

  it("chunked bodies and Expect: 100-continue are served by node:http with the same answer", async () => {
    const body = rpc(7, "eth_chainId");
    const chunked = `POST / HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const [r1] = await exchange(port, [chunked], 1);
    expect(JSON.parse(r1!.body)).toEqual({ jsonrpc: "2.0", id: 7, result: "0x133edcb" });
    const [r2] = await exchange(port, [post(body, "Expect: 100-continue\r\n")], 1);
    expect(JSON.parse(r2!.body)).toEqual({ jsonrpc: "2.0", id: 7, result: "0x133edcb" });
  });

  it("a body over the limit is refused with 413 before it is read, and the connection closes", async () => {
    const head = `POST / HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`;
    const [r] = await exchange(port, [head], 1);
    expect(r!.status).toBe(413);
    expect(r!.headers.connection).toBe("close");
    expect(JSON.parse(r!.body).error.message).toMatch(/exceeds the 1 MB limit/);
  });

  it("a head over 16 KB gets node:http's 431; a malformed request gets its 400", async () => {
    const [big] = await exchange(port, [`POST / HTTP/1.1\r\nHost: gw\r\nX-Pad: ${"a".repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`], 1);
    expect(big!.status).toBe(431);
    const [bad] = await exchange(port, ["POST / HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\nBad Header: x\r\n\r\n{}"], 1);
    expect(bad!.status).toBe(400);
    const [noHost] = await exchange(port, [`POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}`], 1);
    expect(noHost!.status).toBe(400);
  });

  it("a request dripped a few bytes at a time is answered once whole", async () => {
    const whole = post(rpc(9, "eth_chainId"));
    const drips = whole.match(/[\s\S]{1,7}/g)!;
    const [r] = await exchange(port, drips, 1, 2);
    expect(JSON.parse(r!.body)).toEqual({ jsonrpc: "2.0", id: 9, result: "0x133edcb" });
  });

  it("a large body arriving in small pieces costs linear work, not a copy of everything so far per piece", async () => {
    // ~900 KB of JSON-RPC batch in 1,800 pieces of 512 bytes, each sent on its own. Gathered piece by piece,
    // the lane copied ~800 MB (what it held so far, per piece); gathered once whole, ~1 MB.
    const body = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId", params: [], pad: "x".repeat(22_000) })));
    const whole = Buffer.from(post(body));
    const pieces = Array.from({ length: Math.ceil(whole.length / 512) }, (_, i) => whole.subarray(i * 512, (i + 1) * 512));
    const cpu = process.cpuUsage();
    const [r] = await exchange(port, pieces, 1, 1);
    const used = process.cpuUsage(cpu);
    expect(r!.status).toBe(200);
    expect((JSON.parse(r!.body) as unknown[]).length).toBe(40);
    // This process is the client too (1,800 writes, the timers between them): that is most of what is left.
    expect((used.user + used.system) / 1000).toBeLessThan(COPY_CPU_MS);
  });

  it("HTTP/1.0 and Connection: close go to node:http, which closes after answering", async () => {
    const body = rpc(4, "eth_chainId");
    const [r10] = await exchange(port, [`POST / HTTP/1.0\r\nHost: gw\r\nContent-Length: ${body.length}\r\n\r\n${body}`], 1);
    expect(JSON.parse(r10!.body).id).toBe(4);
    const [rc] = await exchange(port, [post(body, "Connection: close\r\n")], 1);
    expect(JSON.parse(rc!.body).id).toBe(4);
    expect(rc!.headers.connection).toBe("close");
  });

  it("a notification gets 204 with no body, and the connection goes on", async () => {
    const notification = JSON.stringify({ jsonrpc: "2.0", method: "eth_chainId", params: [] });
    const [n, r] = await exchange(port, [post(notification) + post(rpc(5, "eth_chainId"))], 2);
    expect(n!.status).toBe(204);
    expect(n!.body).toBe("");
    expect(n!.headers["content-length"]).toBeUndefined();
    expect(JSON.parse(r!.body).id).toBe(5);
  });

  it("multi-byte UTF-8 in request and answer keeps byte-exact lengths", async () => {
    const [r, next] = await exchange(port, [post(rpc(6, "foo_ünïcødé€")) + post(rpc(8, "eth_chainId"))], 2);
    expect(JSON.parse(r!.body)).toMatchObject({ id: 6, error: { code: -32601, message: expect.stringContaining("foo_ünïcødé€") } });
    expect(Number(r!.headers["content-length"])).toBe(Buffer.byteLength(r!.body));
    expect(JSON.parse(next!.body).id).toBe(8);
  });

  it("a client repeating its head with bodies of other lengths gets each body read whole", async () => {
    // The same head but for Content-Length (1, 2, 3 digits, then shorter again): the lane's repeat check.
    const bodies = [rpc(1, "eth_chainId"), rpc(10, "eth_chainId"), rpc(100, "net_version"), "x".repeat(1000), rpc(5, "eth_chainId"), "{"];
    const rs = await exchange(port, [bodies.map((b) => post(b)).join("")], bodies.length);
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 400, 200, 400]);
    expect(JSON.parse(rs[0]!.body)).toEqual({ jsonrpc: "2.0", id: 1, result: "0x133edcb" });
    expect(JSON.parse(rs[1]!.body)).toEqual({ jsonrpc: "2.0", id: 10, result: "0x133edcb" });
    expect(JSON.parse(rs[2]!.body)).toEqual({ jsonrpc: "2.0", id: 100, result: "20180427" });
    expect(JSON.parse(rs[3]!.body).error.code).toBe(-32700);
    expect(JSON.parse(rs[4]!.body)).toEqual({ jsonrpc: "2.0", id: 5, result: "0x133edcb" });
    expect(JSON.parse(rs[5]!.body).error.code).toBe(-32700);
  });

  it("a repeated head is checked again: a new path, a header after the length, an oversized or overlong length", async () => {
    const body = rpc(1, "eth_chainId");
    const [a, keyed] = await exchange(port, [post(body) + post(body, "", "/zgt/cgw_doesnotexist")], 2);
    expect([a!.status, keyed!.status]).toEqual([200, 401]);
    // The same head plus Connection: close after the length goes to node:http, which closes.
    const [b, closing] = await exchange(port, [post(body) + post(body, "Connection: close\r\n")], 2);
    expect([b!.status, closing!.status, closing!.headers.connection]).toEqual([200, 200, "close"]);
    const head = (length: string): string => `POST / HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const [c, tooBig] = await exchange(port, [post(body) + head(String(2 * 1024 * 1024))], 2);
    expect([c!.status, tooBig!.status]).toEqual([200, 413]);
    // 11 digits: not the lane's (node:http reads it as a length, over the limit).
    const [d, overlong] = await exchange(port, [post(body) + head("12345678901")], 2);
    expect([d!.status, overlong!.status]).toEqual([200, 413]);
  });

  it("keyed paths, CORS and ZKT take the lane with the same answers", async () => {
    const [unknownKey] = await exchange(port, [post(rpc(1, "eth_chainId"), "", "/zgt/cgw_doesnotexist")], 1);
    expect(unknownKey!.status).toBe(401);
    const [cors] = await exchange(port, [post(rpc(1, "eth_chainId"), "Origin: https://app.example\r\n")], 1);
    expect(cors!.headers["access-control-allow-origin"]).toBe("*");
    expect(cors!.headers["access-control-expose-headers"]).toMatch(/x-ratelimit-remaining/);
    const [zkt] = await exchange(port, [post(JSON.stringify({ arguments: "" }), "", "/zkt/try-it-out")], 1);
    expect(zkt!.status).toBe(400);
    expect(JSON.parse(zkt!.body)).toMatchObject({ success: false, errorCode: "VALIDATION_ERROR" });
  });
});
