// A caller over its request limit is refused before its body is read (#51): over HTTP/2 (and node:http's
// path) a request whose body is still arriving gets its 429 at once, for JSON-RPC and ZKT alike, instead of
// the gateway reading and parsing up to a megabyte per stream first (a plain stream flood from one IP). On
// HTTP/1.1's fast lane, which reads a body whole, a large one is not parsed for such a caller.
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

  it("gets 429 for a large body over HTTP/1.1 without its body being parsed, on JSON-RPC and ZKT", async () => {
    // (Runs first: the window is spent here, and the next test finds it spent.)
    for (let i = 0; i < 3; i++) expect((await post("/", JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] }))).status).toBe(200);
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_call",
      params: [{ to: "0x000000000000000000000000000000000000bEEF", data: `0x${"00".repeat(400_000)}` }, "latest"],
    });
    const parse = JSON.parse;
    let parsedLarge = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      if (typeof text === "string" && text.length > 500_000) parsedLarge++;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      const url = gw.network("testnet").url;
      const rpc = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: big });
      expect(rpc.status).toBe(429);
      expect(await rpc.json()).toMatchObject({ error: { code: -32005 } });
      const zkt = await fetch(`${url}/zkt/try-it-out`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
      expect(zkt.status).toBe(429);
      // A small one is parsed and refused by the handlers as before.
      const small = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}',
      });
      expect(await small.json()).toMatchObject({ id: 7, error: { code: -32005 } });
    } finally {
      JSON.parse = parse;
    }
    expect(parsedLarge).toBe(0);
  });

  it("gets 429 at once for a body still arriving, on JSON-RPC and ZKT", async () => {
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
