// A caller over its request limit is refused before its body is read (#51): over HTTP/2 (and node:http's
// path) a request whose body is still arriving gets its 429 at once, for JSON-RPC and ZKT alike, instead of
// the gateway reading and parsing up to a megabyte per stream first (a plain stream flood from one IP).
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

describe("a caller over its limit", () => {
  let gw: Gateway;
  let session: http2.ClientHttp2Session;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = 3) });
    session = http2.connect(gw.network("testnet").url);
  });
  afterAll(async () => {
    session?.close();
    await gw?.close();
  });

  /** A POST whose body is `sent` bytes of the `declared` announced, never ended; its status and body. */
  const post = (path: string, body: string, declared = Buffer.byteLength(body), end = true) =>
    new Promise<{ status: number; body: string; retryAfter: string | undefined }>((resolve, reject) => {
      const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/json", "content-length": String(declared) });
      let status = 0;
      let retryAfter: string | undefined;
      let text = "";
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        retryAfter = h["retry-after"] as string | undefined;
      });
      stream.on("data", (d: Buffer) => (text += d.toString()));
      stream.on("end", () => resolve({ status, body: text, retryAfter }));
      stream.on("error", reject);
      const timer = setTimeout(() => reject(new Error(`no answer in 3 s (status ${status})`)), 3_000);
      stream.on("close", () => clearTimeout(timer));
      if (end) stream.end(body);
      else stream.write(body);
    });

  it("gets 429 at once for a body still arriving, on JSON-RPC and ZKT", async () => {
    for (let i = 0; i < 3; i++) expect((await post("/", JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] }))).status).toBe(200);
    // 900 KB announced, 1 KB sent, never finished: answered without waiting for the rest.
    const rpc = await post("/", " ".repeat(1024), 900_000, false);
    expect(rpc.status).toBe(429);
    expect(Number(rpc.retryAfter)).toBeGreaterThan(0);
    expect(JSON.parse(rpc.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32005 } });
    const zkt = await post("/zkt/try-it-out", " ".repeat(1024), 900_000, false);
    expect(zkt.status).toBe(429);
    expect(JSON.parse(zkt.body)).toMatchObject({ success: false, errorCode: "RATE_LIMITED" });
  });
});
