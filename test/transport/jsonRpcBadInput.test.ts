// Malformed and forbidden JSON-RPC input: each gets a clear, specific error, changes nothing, and the
// server keeps serving.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { gzipSync } from "node:zlib";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const req = (method: string, params: unknown[] = [], id: unknown = 1) => ({ jsonrpc: "2.0", id, method, params });
const PROBE = "0x00000000000000000000000000000000000000aa";

describe("JSON-RPC bad input", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url + "/";
  });
  afterAll(() => gw?.close());
  afterEach(async () => {
    // Still serving, and nothing changed.
    const res = await postJson(url, req("eth_getBalance", [PROBE, "latest"]));
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x0" });
  });

  const cases: [string, string | unknown, number, number, RegExp][] = [
    ["invalid JSON", "{not json", 400, -32700, /^Parse error/],
    ["a non-object (number)", "42", 400, -32600, /expected a JSON-RPC request object/],
    ["a non-object (string)", '"eth_chainId"', 400, -32600, /expected a JSON-RPC request object/],
    ["missing jsonrpc", { id: 1, method: "eth_chainId", params: [] }, 400, -32600, /"jsonrpc" must be exactly "2.0"/],
    ["wrong jsonrpc", { jsonrpc: "1.0", id: 1, method: "eth_chainId", params: [] }, 400, -32600, /"jsonrpc" must be exactly "2.0"/],
    ["jsonrpc as number", { jsonrpc: 2.0, id: 1, method: "eth_chainId", params: [] }, 400, -32600, /"jsonrpc" must be exactly "2.0"/],
    ["missing method", { jsonrpc: "2.0", id: 1, params: [] }, 400, -32600, /"method" must be a string/],
    ["method not a string", { jsonrpc: "2.0", id: 1, method: 5, params: [] }, 400, -32600, /"method" must be a string/],
    ["params a string", { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: "x" }, 400, -32600, /"params" must be an array, an object or null/],
    ["params an object", { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: { address: PROBE } }, 200, -32602, /positional params/],
    ["id an object", { jsonrpc: "2.0", id: {}, method: "eth_chainId", params: [] }, 400, -32600, /"id" must be a string, a number or null/],
    ["empty batch", [], 400, -32600, /empty batch/],
    [
      "batch of 41",
      Array.from({ length: 41 }, (_, i) => req("eth_chainId", [], i)),
      400,
      -32600,
      /at most 40 requests, this one has 41; set your client.s batch size to 40 \(viem: .*batchSize: 40.*ethers: .*batchMaxCount: 40/,
    ],
    ["unknown method", req("eth_doesNotExist"), 200, -32601, /Method not found/],
    ["unknown namespace", req("foo_bar"), 200, -32601, /Method not found: foo_bar/],
    ["eth_blobBaseFee", req("eth_blobBaseFee"), 200, -32601, /eth_blobBaseFee is not supported/],
    ["eth_sendTransaction", req("eth_sendTransaction", [{ from: PROBE, to: PROBE }]), 200, -32601, /not available on this gateway/],
    ["eth_accounts", req("eth_accounts"), 200, -32601, /not available on this gateway/],
    ["anvil_setBalance", req("anvil_setBalance", [PROBE, "0x1000"]), 200, -32601, /not available on this gateway/],
    ["debug_traceTransaction", req("debug_traceTransaction", ["0x" + "00".repeat(32)]), 200, -32601, /not available on this gateway/],
    ["eth_sign", req("eth_sign", [PROBE, "0x00"]), 200, -32601, /not available on this gateway/],
    [
      "eth_sendRawTransaction on the public path",
      req("eth_sendRawTransaction", ["0x00"]),
      200,
      -32003,
      /needs an API key.*POST \/portal\/keys.*\/zgt\/<API_KEY>/,
    ],
    ["invalid params passed through from the node", req("eth_getBalance", ["0x12", "latest"]), 200, -32602, /./],
    // #55: an invalid request is 400, as the docs say, wherever it is found (it was 200).
    ["an empty method", req(""), 400, -32600, /"method" must not be empty/],
    // #55: params the node cannot even read are the caller's (they were -32603 "upstream answer was missing a response").
    [
      "a lone surrogate in params",
      '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["\\ud800","latest"]}',
      200,
      -32602,
      /the node could not read them/,
    ],
    [
      "params nested 2,000 deep",
      `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":${"[".repeat(2_000)}${"]".repeat(2_000)}}`,
      200,
      -32602,
      /the node could not read them/,
    ],
    // The caller's request, not a fault of ours (#51): it was -32603 "internal error".
    [
      "params nested 100,000 deep",
      `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
      400,
      -32600,
      /nested too deeply/,
    ],
    [
      "an object nested 50,000 deep",
      `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}]}`,
      400,
      -32600,
      /nested too deeply/,
    ],
  ];

  for (const [name, body, status, code, message] of cases) {
    it(name, async () => {
      const res = await postJson(url, body);
      expect(res.status).toBe(status);
      const payload = res.json as { error: { code: number; message: string } };
      expect(payload.error.code).toBe(code);
      expect(payload.error.message).toMatch(message);
    });
  }

  it("forbidden methods inside a batch are refused item by item", async () => {
    const res = await postJson(url, [req("eth_chainId", [], 1), req("anvil_setBalance", [PROBE, "0x1"], 2), req("eth_accounts", [], 3)]);
    expect(res.status).toBe(200);
    const items = res.json as { id: number; result?: string; error?: { code: number } }[];
    expect(items.map((i) => i.id)).toEqual([1, 2, 3]);
    expect(items[0]!.result).toBe("0x133edcb");
    expect(items[1]!.error!.code).toBe(-32601);
    expect(items[2]!.error!.code).toBe(-32601);
  });

  it("params null is no params, as the node reads it (#68), over HTTP and WebSocket", async () => {
    const res = await postJson(url, { jsonrpc: "2.0", method: "eth_chainId", params: null, id: 1 });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x133edcb" });
    const { WebSocket } = await import("ws");
    const ws = new WebSocket(url.replace("http://", "ws://"));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const answer = new Promise<string>((resolve) => ws.once("message", (d) => resolve(String(d))));
    ws.send(JSON.stringify({ jsonrpc: "2.0", method: "eth_blockNumber", params: null, id: 2 }));
    expect(JSON.parse(await answer)).toMatchObject({ id: 2, result: expect.stringMatching(/^0x/) });
    ws.close();
  });

  it("a batch of exactly 40 is served", async () => {
    const res = await postJson(
      url,
      Array.from({ length: 40 }, (_, i) => req("eth_blockNumber", [], i)),
    );
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(40);
  });

  it("a 2 MB body is refused with 413 on POST /", async () => {
    const big = JSON.stringify(req("eth_call", [{ data: "0x" + "ab".repeat(1024 * 1024) }, "latest"]));
    const res = await postJson(url, big);
    expect(res.status).toBe(413);
    expect((res.json as { error: { message: string } }).error.message).toMatch(/exceeds the 1 MB limit/);
  });

  it("a 2 MB body is refused on the Connect path too", async () => {
    const big = JSON.stringify({ method: "eth_call", params: [{ data: "0x" + "ab".repeat(1024 * 1024) }, "latest"] });
    const res = await postJson(url + "chaingateway.rpc.v1.RpcService/Call", big);
    expect(res.status).toBe(429); // Connect maps resource_exhausted to 429
    expect((res.json as { code: string }).code).toBe("resource_exhausted");
  });

  it("unknown paths are 404 and wrong verbs 405 saying what is allowed (Allow); OPTIONS asks that (#55)", async () => {
    expect((await fetch(url + "nope")).status).toBe(404);
    const get = await fetch(url, { method: "GET" });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    const put = await fetch(url + "zkt/try-it-out", { method: "PUT", body: "{}" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("POST, OPTIONS");
    const options = await fetch(url, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("POST, OPTIONS");
    expect((await fetch(url + "zkt/transactions/x", { method: "OPTIONS" })).headers.get("allow")).toBe("GET, OPTIONS");
  });

  it("a compressed body is refused with 415 saying so, not taken for bad JSON (#55)", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "content-encoding": encoding },
        body: gzipSync(JSON.stringify(req("eth_chainId"))),
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ error: { code: -32600, message: `Content-Encoding ${encoding} is not supported: send the body uncompressed` } });
    }
    const zkt = await fetch(url + "zkt/try-it-out", { method: "POST", headers: { "content-encoding": "gzip" }, body: gzipSync("{}") });
    expect(zkt.status).toBe(415);
    expect(await zkt.json()).toMatchObject({ success: false, errorCode: "UNSUPPORTED_MEDIA_TYPE" });
  });

  it('an id is echoed as sent when params hold an "id" of their own (#55)', async () => {
    const res = await postJson(url, '{"jsonrpc":"2.0","method":"eth_chainId","params":[{"id":7}],"id":7.0}');
    expect(res.text).toBe('{"jsonrpc":"2.0","id":7.0,"result":"0x133edcb"}');
  });

  it("POST /<a key of another shape> is 401 unknown API key, not 404 (#55)", async () => {
    for (const key of ["abcdefghijklmnopqrstuvwxyz012345", "0123456789abcdef0123456789abcdef"]) {
      const res = await postJson(url + key, req("eth_chainId"));
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ error: { code: -32001, message: expect.stringMatching(/unknown API key/) } });
    }
    expect((await postJson(url + "short", req("eth_chainId"))).status).toBe(404);
  });

  it("/zgt/<unknown key> is 401 with a JSON-RPC error for the request (its id) that does not echo the key", async () => {
    const res = await postJson(url + "zgt/cgw_not-a-real-key", req("eth_chainId"));
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32001, message: expect.stringMatching(/unknown API key/) } });
    expect(res.text).not.toContain("not-a-real-key");
  });
});
