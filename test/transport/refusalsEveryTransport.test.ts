// Every refusal counts, on every transport (#62, #64): a malformed, unauthorised, oversize or wrongly typed
// request costs its caller one request of the same per-IP limit whether it came over HTTP/1.1, HTTP/2,
// WebSocket, gRPC or Connect. Each transport is called from an address of its own; the budget left is then read
// from that address's next JSON-RPC answer (x-ratelimit-remaining).
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const LIMIT = 1_000;
const BODY_LIMIT = 64 * 1024;
const OVERSIZE = "x".repeat(BODY_LIMIT + 1);
const BALANCE = "/chaingateway.rpc.v1.RpcService/GetBalance";
/** Field 1 (address), length-delimited, 16 bytes announced and none sent. */
const TRUNCATED = new Uint8Array([0x0a, 0x10]);
const enveloped = (msg: Uint8Array): Buffer => Buffer.from([0, 0, 0, 0, msg.length, ...msg]);
const DEAD = "0x000000000000000000000000000000000000dEaD";
/** A well-formed GetBalance request, gzip-compressed and flagged so (Connect and gRPC take bodies uncompressed). */
const GZIPPED_BALANCE = gzipSync(Buffer.from([0x0a, DEAD.length, ...Buffer.from(DEAD)]));

interface Shape {
  path: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

const JSON_HEADERS = { "content-type": "application/json" };
/** What a broken or hostile HTTP client sends (either HTTP version), each refused. */
const HTTP_SHAPES: [string, Shape][] = [
  ["not JSON", { path: "/", headers: JSON_HEADERS, body: "{" }],
  ["not a request", { path: "/", headers: JSON_HEADERS, body: '{"jsonrpc":"2.0"}' }],
  ["an empty batch", { path: "/", headers: JSON_HEADERS, body: "[]" }],
  ["a body over the limit", { path: "/", headers: JSON_HEADERS, body: OVERSIZE }],
  ["a compressed body (415)", { path: "/", headers: { ...JSON_HEADERS, "content-encoding": "gzip" }, body: Buffer.from([0x1f, 0x8b, 8, 0]) }],
  ["an unknown API key", { path: "/zgt/not-a-key", headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' }],
  ["a ZKT body that is not JSON", { path: "/zkt/try-it-out", headers: JSON_HEADERS, body: "{" }],
  ["a ZKT body over the limit", { path: "/zkt/try-it-out", headers: JSON_HEADERS, body: OVERSIZE }],
  ["a ZKT write to an unknown key", { path: "/zkt/not-a-key", headers: JSON_HEADERS, body: '{"arguments":"hi"}' }],
  ["no such path", { path: "/nowhere", headers: JSON_HEADERS, body: "{}" }],
];
/** The Connect wire's own broken shapes (Connect JSON over HTTP/1.1 and gRPC over h2c). */
const CONNECT_SHAPES: [string, Shape][] = [
  ["bad JSON", { path: BALANCE, headers: JSON_HEADERS, body: '{"address": ' }],
  ["bad protobuf", { path: BALANCE, headers: { "content-type": "application/proto" }, body: Buffer.from(TRUNCATED) }],
  ["an unknown API key", { path: BALANCE, headers: { ...JSON_HEADERS, authorization: "Bearer not-a-key" }, body: "{}" }],
  ["a malformed authorization", { path: BALANCE, headers: { ...JSON_HEADERS, authorization: "Basic x" }, body: "{}" }],
  ["a compressed body", { path: BALANCE, headers: { ...JSON_HEADERS, "content-encoding": "gzip" }, body: gzipSync(JSON.stringify({ address: DEAD })) }],
];
const GRPC = { "content-type": "application/grpc+proto", te: "trailers" };
const GRPC_SHAPES: [string, Shape][] = [
  ["bad protobuf", { path: BALANCE, headers: GRPC, body: enveloped(TRUNCATED) }],
  ["an unknown API key", { path: BALANCE, headers: { ...GRPC, authorization: "Bearer not-a-key" }, body: enveloped(new Uint8Array()) }],
  ["a malformed authorization", { path: BALANCE, headers: { ...GRPC, authorization: "Basic x" }, body: enveloped(new Uint8Array()) }],
  [
    "a compressed message",
    { path: BALANCE, headers: { ...GRPC, "grpc-encoding": "gzip" }, body: Buffer.from([1, 0, 0, 0, GZIPPED_BALANCE.length, ...GZIPPED_BALANCE]) },
  ],
];
/** WebSocket messages on one open socket, each answered with an error. */
const WS_MESSAGES: [string, string][] = [
  ["not JSON", "{"],
  ["not a request", '{"jsonrpc":"2.0"}'],
  ["an empty batch", "[]"],
  ["an unknown method", '{"jsonrpc":"2.0","id":1,"method":"eth_nothing","params":[]}'],
];

function h1(base: string, ip: string, shape: Shape): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + shape.path, { method: "POST", headers: shape.headers, localAddress: ip, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(shape.body);
  });
}

/** Each shape on one HTTP/2 connection from `ip`; the :status (and grpc-status) of each. */
async function h2(base: string, ip: string, shapes: Shape[]): Promise<string[]> {
  const { hostname, port } = new URL(base);
  const session = http2.connect(base, { createConnection: () => net.connect({ host: hostname, port: Number(port), localAddress: ip }) });
  try {
    return await Promise.all(
      shapes.map(
        (shape) =>
          new Promise<string>((resolve, reject) => {
            const req = session.request({ ":method": "POST", ":path": shape.path, ...shape.headers });
            let status = "";
            req.on("response", (h) => {
              status = `${h[":status"]}${h["grpc-status"] ? `/${h["grpc-status"]}` : ""}`;
            });
            req.on("trailers", (t) => {
              if (t["grpc-status"]) status += `/${t["grpc-status"]}`;
            });
            req.on("end", () => resolve(status));
            req.on("error", reject);
            req.resume();
            req.end(shape.body);
          }),
      ),
    );
  } finally {
    session.close();
  }
}

/** `message` sent `n` times on one socket opened from `ip`, one at a time: each answer's error code (0 if none). */
async function wsCodes(url: string, ip: string, message: string, n: number): Promise<number[]> {
  const ws = new WebSocket(url, { localAddress: ip });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const codes: number[] = [];
  for (let i = 0; i < n; i++) {
    const answered = new Promise<Buffer>((resolve) => ws.once("message", resolve));
    ws.send(message);
    codes.push((JSON.parse((await answered).toString()) as { error?: { code: number } }).error?.code ?? 0);
  }
  ws.close();
  return codes;
}

/** What `ip` has left of its request window: one JSON-RPC call of its own reads it. */
async function remaining(base: string, ip: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(base, { method: "POST", headers: JSON_HEADERS, localAddress: ip, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(Number(res.headers["x-ratelimit-remaining"])));
    });
    req.on("error", reject);
    req.end('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}');
  });
}

describe("refusals are counted on every transport", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.requestsPerWindow = LIMIT;
        c.bodyLimitBytes = BODY_LIMIT;
      },
    });
    base = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("HTTP/1.1: each refused request takes one from the caller's limit", async () => {
    const ip = "127.0.0.31";
    const statuses: Record<string, number> = {};
    for (const [name, shape] of HTTP_SHAPES) statuses[name] = await h1(base, ip, shape);
    for (const [name, status] of Object.entries(statuses)) expect(status, name).not.toBe(200);
    expect(await remaining(base, ip), JSON.stringify(statuses)).toBe(LIMIT - HTTP_SHAPES.length - 1);
  });

  it("HTTP/2: the same shapes take the same", async () => {
    const ip = "127.0.0.32";
    const statuses = await h2(
      base,
      ip,
      HTTP_SHAPES.map(([, s]) => s),
    );
    expect(
      statuses.filter((s) => s === "200"),
      statuses.join(" "),
    ).toEqual([]);
    expect(await remaining(base, ip), statuses.join(" ")).toBe(LIMIT - HTTP_SHAPES.length - 1);
  });

  it("Connect over HTTP/1.1: each refused call takes one", async () => {
    const ip = "127.0.0.33";
    const statuses: number[] = [];
    for (const [, shape] of CONNECT_SHAPES) statuses.push(await h1(base, ip, shape));
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(" "),
    ).toEqual([]);
    expect(await remaining(base, ip), statuses.join(" ")).toBe(LIMIT - CONNECT_SHAPES.length - 1);
  });

  it("gRPC over h2c: each refused call takes one", async () => {
    const ip = "127.0.0.34";
    const statuses = await h2(
      base,
      ip,
      GRPC_SHAPES.map(([, s]) => s),
    );
    expect(
      statuses.filter((s) => s.endsWith("/0")),
      statuses.join(" "),
    ).toEqual([]);
    expect(await remaining(base, ip), statuses.join(" ")).toBe(LIMIT - GRPC_SHAPES.length - 1);
  });

  it("WebSocket: each refused message takes one, and so does a refused upgrade", async () => {
    const ip = "127.0.0.35";
    const ws = new WebSocket(base.replace("http", "ws"), { localAddress: ip });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const answers: string[] = [];
    const all = new Promise<void>((resolve) => {
      ws.on("message", (data: Buffer) => {
        answers.push(data.toString());
        if (answers.length === WS_MESSAGES.length) resolve();
      });
    });
    for (const [, msg] of WS_MESSAGES) ws.send(msg);
    await all;
    ws.close();
    for (const a of answers) expect(JSON.parse(a) as { error?: unknown }, a).toHaveProperty("error");
    // An upgrade with a key that does not exist is refused (401) and counted too.
    const refused = new WebSocket(base.replace("http", "ws") + "/zgt/not-a-key", { localAddress: ip });
    const status = await new Promise<number>((resolve) => {
      refused.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      refused.once("open", () => resolve(101));
      refused.once("error", () => resolve(-1));
    });
    expect(status).toBe(401);
    // A socket's opening upgrade is one request too (the WebSocket's own admission).
    const opened = 1;
    expect(await remaining(base, ip), answers.join("\n")).toBe(LIMIT - WS_MESSAGES.length - 1 - opened - 1);
  });
});

// Over the limit, every transport refuses the same way: three requests of a limit of 3 pass, the fourth is
// refused (HTTP 429, Connect resource_exhausted, gRPC 8, JSON-RPC -32005 on a WebSocket).
describe("the request limit, on every transport", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = 3) });
    base = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());
  const chainId = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
  const GET_CHAIN_ID = "/chaingateway.rpc.v1.RpcService/GetChainId";

  it("HTTP/1.1 and HTTP/2: 200, 200, 200, 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await h1(base, "127.0.0.61", { path: "/", headers: JSON_HEADERS, body: chainId }));
    expect(statuses).toEqual([200, 200, 200, 429]);
    const h2Statuses: string[] = [];
    for (let i = 0; i < 4; i++) h2Statuses.push(...(await h2(base, "127.0.0.62", [{ path: "/", headers: JSON_HEADERS, body: chainId }])));
    expect(h2Statuses).toEqual(["200", "200", "200", "429"]);
  });

  it("Connect and gRPC: three answered, the fourth resource_exhausted", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await h1(base, "127.0.0.63", { path: GET_CHAIN_ID, headers: JSON_HEADERS, body: "{}" }));
    expect(statuses).toEqual([200, 200, 200, 429]);
    const grpc: string[] = [];
    for (let i = 0; i < 4; i++) grpc.push(...(await h2(base, "127.0.0.64", [{ path: GET_CHAIN_ID, headers: GRPC, body: enveloped(new Uint8Array()) }])));
    expect(grpc.map((s) => s.split("/").at(-1))).toEqual(["0", "0", "0", "8"]);
  });

  it("WebSocket: the upgrade and two messages pass, the third message is refused with -32005", async () => {
    expect(await wsCodes(base.replace("http", "ws"), "127.0.0.65", chainId, 3)).toEqual([0, 0, -32005]);
  });
});

// The per-IP share: keys used from one address share one limit of their own (perIpRequestsPerWindow), whatever
// key and transport; past it every transport refuses as it does any limit.
describe("one address's share across its keys, on every transport", () => {
  let gw: Gateway;
  let base: string;
  let keys: string[];
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.requestsPerWindow = 1_000;
        c.rateLimit.perIpRequestsPerWindow = 3;
      },
    });
    base = gw.network("testnet").url;
    keys = [];
    for (const label of ["a", "b"]) keys.push(((await postJson(`${base}/portal/keys`, { label })).json as { apiKey: string }).apiKey);
  });
  afterAll(() => gw?.close());
  const chainId = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
  const GET_CHAIN_ID = "/chaingateway.rpc.v1.RpcService/GetChainId";
  const key = (i: number): string => keys[i % 2] ?? "";

  it("HTTP/1.1 and HTTP/2 with two keys: 200, 200, 200, 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await h1(base, "127.0.0.71", { path: `/zgt/${key(i)}`, headers: JSON_HEADERS, body: chainId }));
    expect(statuses).toEqual([200, 200, 200, 429]);
    const h2Statuses: string[] = [];
    for (let i = 0; i < 4; i++) h2Statuses.push(...(await h2(base, "127.0.0.72", [{ path: `/zgt/${key(i)}`, headers: JSON_HEADERS, body: chainId }])));
    expect(h2Statuses).toEqual(["200", "200", "200", "429"]);
  });

  it("Connect and gRPC with two keys: three answered, the fourth resource_exhausted", async () => {
    const bearer = (i: number) => ({ authorization: `Bearer ${key(i)}` });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await h1(base, "127.0.0.73", { path: GET_CHAIN_ID, headers: { ...JSON_HEADERS, ...bearer(i) }, body: "{}" }));
    expect(statuses).toEqual([200, 200, 200, 429]);
    const grpc: string[] = [];
    for (let i = 0; i < 4; i++)
      grpc.push(...(await h2(base, "127.0.0.74", [{ path: GET_CHAIN_ID, headers: { ...GRPC, ...bearer(i) }, body: enveloped(new Uint8Array()) }])));
    expect(grpc.map((s) => s.split("/").at(-1))).toEqual(["0", "0", "0", "8"]);
  });

  it("WebSocket on a key, after a call on the other: the upgrade and one message pass, the next is -32005", async () => {
    expect(await h1(base, "127.0.0.75", { path: `/zgt/${key(1)}`, headers: JSON_HEADERS, body: chainId })).toBe(200);
    expect(await wsCodes(`${base.replace("http", "ws")}/zgt/${key(0)}`, "127.0.0.75", chainId, 2)).toEqual([0, -32005]);
  });
});

/** A request's head declaring `length` bytes of body and none of them sent; its status line's code. */
function headOnly(base: string, ip: string, path: string, length: number, contentType = "application/json"): Promise<{ status: number; socket: net.Socket }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: ip }, () =>
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: ${contentType}\r\ncontent-length: ${length}\r\n\r\n`),
    );
    socket.once("data", (d: Buffer) => resolve({ status: Number(d.toString("latin1").split(" ")[1]), socket }));
    socket.once("error", reject);
  });
}

/** The same over HTTP/2: a stream declaring `length` bytes and sending none; its :status. */
function h2HeadOnly(base: string, ip: string, path: string, length: number, headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(base);
  const session = http2.connect(base, { createConnection: () => net.connect({ host: hostname, port: Number(port), localAddress: ip }) });
  return new Promise<string>((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": path, ...headers, "content-length": String(length) }, { endStream: false });
    req.on("response", (h) => resolve(String(h[":status"])));
    req.on("error", reject);
  }).finally(() => session.destroy());
}

/** A stream sending `bytes` with no declared length; the code of its reset (0 when it was answered). */
function h2Streamed(base: string, ip: string, path: string, headers: Record<string, string>, bytes: number): Promise<number> {
  const { hostname, port } = new URL(base);
  const session = http2.connect(base, { createConnection: () => net.connect({ host: hostname, port: Number(port), localAddress: ip }) });
  return new Promise<number>((resolve) => {
    const req = session.request({ ":method": "POST", ":path": path, ...headers });
    req.on("close", () => resolve(req.rstCode ?? 0));
    req.on("error", () => undefined);
    req.resume();
    req.end(Buffer.alloc(bytes));
  }).finally(() => session.destroy());
}

// The body budget: a body the server has no room for is refused (503) before a byte of it is read, and that
// refusal is a request of its caller on every transport that carries bodies, as every other refusal is.
describe("a body refused for room costs its caller a request, on every transport", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.requestsPerWindow = LIMIT;
        c.bodyLimitBytes = BODY_LIMIT;
        c.http.bodyBudgetBytes = 100_000;
      },
    });
    base = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("HTTP/1.1 (JSON-RPC, ZKT, Connect) and HTTP/2 (JSON-RPC, gRPC): each 503 takes one", async () => {
    // Another address holds 60 KB of the 100 KB budget with a body it never sends.
    const holder = await Promise.race([
      headOnly(base, "127.0.0.81", "/", 60_000),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300)),
    ]);
    expect(holder, "the holder is still waiting to send its body").toBeUndefined();
    const ip = "127.0.0.82";
    const statuses = [
      (await headOnly(base, ip, "/", 60_000)).status,
      (await headOnly(base, ip, "/zkt/try-it-out", 60_000)).status,
      (await headOnly(base, ip, "/chaingateway.rpc.v1.RpcService/GetChainId", 60_000)).status,
      Number(await h2HeadOnly(base, ip, "/", 60_000, JSON_HEADERS)),
      Number(await h2HeadOnly(base, ip, "/chaingateway.rpc.v1.RpcService/GetChainId", 60_000, GRPC)),
    ];
    expect(statuses).toEqual([503, 503, 503, 503, 503]);
    // A gRPC body of no declared length is held as it arrives: past the room its stream is reset, and the call,
    // admitted by Connect's gate before its body, is counted once.
    const reset = await h2Streamed(base, ip, "/chaingateway.rpc.v1.RpcService/GetChainId", GRPC, 80_000);
    expect(reset).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    expect(await remaining(base, ip)).toBe(LIMIT - statuses.length - 1 - 1);
  });
});
