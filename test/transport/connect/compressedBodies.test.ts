// Compressed request bodies are refused on Connect, gRPC and gRPC-Web, as they are on JSON-RPC (415 there):
// a few KB of gzip expand to the body limit after the gate weighed them by their compressed size, and past
// the body budget, which counts the bytes that arrive. Each refusal costs its caller one request; responses
// are still compressed for clients that accept it.
import http2 from "node:http2";
import net from "node:net";
import { gunzipSync, gzipSync } from "node:zlib";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { compressionGzip, createGrpcTransport } from "@connectrpc/connect-node";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startTestGateway } from "../../helpers/gateway.js";

const LIMIT = 1_000;
const CALL = "/chaingateway.rpc.v1.RpcService/Call";
/** ~1 MB of eth_call data that gzip takes to ~1 KB. */
const paramsJson = JSON.stringify([{ to: "0x000000000000000000000000000000000000dEaD", data: `0x${"ab".repeat(480_000)}` }, "latest"]);
const bomb = gzipSync(JSON.stringify({ method: "eth_call", paramsJson }));

/** What the agent's address has left of its request window: one JSON-RPC call of its own reads it. */
async function remaining(base: string, agent: Agent): Promise<number> {
  const res = await request(base, {
    method: "POST",
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    headers: { "content-type": "application/json" },
    dispatcher: agent,
  });
  await res.body.text();
  return Number(res.headers["x-ratelimit-remaining"]);
}

describe("compressed Connect and gRPC request bodies", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = LIMIT) });
    base = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("a gzip Connect/JSON body is refused (invalid_argument) without being expanded, and costs one request", async () => {
    expect(bomb.length).toBeLessThan(4_096);
    const agent = new Agent({ localAddress: "127.0.0.41" });
    try {
      const res = await request(base + CALL, {
        method: "POST",
        body: bomb,
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
        dispatcher: agent,
      });
      const text = await res.body.text();
      expect(res.statusCode, text).toBe(400);
      expect(JSON.parse(text)).toMatchObject({ code: "invalid_argument", message: expect.stringContaining("send the message uncompressed") });
      // The refused call and the reading call.
      expect(await remaining(base, agent)).toBe(LIMIT - 2);
    } finally {
      await agent.close();
    }
  });

  it("a gRPC client sending gzip messages is told invalid_argument; the same client uncompressed is answered", async () => {
    const url = new URL(base);
    const compressed = createClient(RpcService, createGrpcTransport({ baseUrl: url.origin, sendCompression: compressionGzip }));
    const err = await compressed.call({ method: "eth_call", paramsJson }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect(Code[(err as ConnectError).code]).toBe("InvalidArgument");
    expect((err as ConnectError).rawMessage).toContain("send the message uncompressed");
    const plain = createClient(RpcService, createGrpcTransport({ baseUrl: url.origin }));
    expect((await plain.call({ method: "eth_call", paramsJson })).resultJson).toBe('"0x"');
  });

  it("an attacker's 300 gzip gRPC streams at once: every one refused unexpanded, every one counted", { timeout: 60_000 }, async () => {
    const ip = "127.0.0.42";
    const url = new URL(base);
    const session = http2.connect(base, { createConnection: () => net.connect({ host: url.hostname, port: Number(url.port), localAddress: ip }) });
    // One enveloped message, flagged compressed (1), holding the gzip of the ~1 MB call.
    const message = gzipSync(Buffer.from([0x0a, 8, ...Buffer.from("eth_call"), 0x1a, ...varint(paramsJson.length), ...Buffer.from(paramsJson)]));
    expect(gunzipSync(message).length).toBeGreaterThan(900_000);
    const envelope = Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), message]);
    envelope.writeUInt32BE(message.length, 1);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const outcomes = await Promise.all(
        Array.from(
          { length: 300 },
          () =>
            new Promise<string>((resolve, reject) => {
              const req = session.request({
                ":method": "POST",
                ":path": CALL,
                "content-type": "application/grpc+proto",
                te: "trailers",
                "grpc-encoding": "gzip",
              });
              let status = "";
              let detail = "";
              req.on("response", (h) => {
                if (h["grpc-status"]) [status, detail] = [String(h["grpc-status"]), decodeURIComponent(String(h["grpc-message"] ?? ""))];
              });
              req.on("trailers", (t) => {
                if (t["grpc-status"]) [status, detail] = [String(t["grpc-status"]), decodeURIComponent(String(t["grpc-message"] ?? ""))];
              });
              req.on("end", () => resolve(`${status} ${detail.includes("send the message uncompressed") ? "refused as compressed" : detail}`));
              req.on("error", reject);
              req.resume();
              req.end(envelope);
            }),
        ),
      );
      // grpc-status 3: invalid_argument, each for its compression (none expanded and then refused for its size).
      expect(new Set(outcomes)).toEqual(new Set(["3 refused as compressed"]));
    } finally {
      clearInterval(sampler);
      session.close();
    }
    // Counted: 300 refusals and the reading call, from this attacker's address.
    const agent = new Agent({ localAddress: ip });
    try {
      expect(await remaining(base, agent)).toBe(LIMIT - 300 - 1);
    } finally {
      await agent.close();
    }
    // 300 expansions of ~1 MB held at once would be ~300 MB; refused unexpanded, far less.
    expect(peak - before).toBeLessThan(150 * 1024 * 1024);
  });

  it("responses are still compressed for a client that accepts gzip", async () => {
    const res = await request(base + CALL, {
      method: "POST",
      body: JSON.stringify({ method: "eth_getBlockByNumber", paramsJson: '["0x0", true]' }),
      headers: { "content-type": "application/json", "accept-encoding": "gzip" },
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(body).toString())).toHaveProperty("resultJson");
  });
});

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
