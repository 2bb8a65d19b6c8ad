// Every example of the JSON-RPC 2.0 specification, section 7. The envelope layer is exercised with the
// spec's own example methods; the examples that need no method are also sent to a real gateway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError, type JsonValue } from "../../src/errors.js";
import type { CoreCall } from "../../src/rpc/rpcCore.js";
import { handleJsonRpc, type ItemOutcome, type JsonRpcHandlers } from "../../src/transport/jsonrpc/handleJsonRpc.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const notified: string[] = [];
const specMethods: Record<string, (p: CoreCall["params"]) => JsonValue> = {
  subtract: (p) => (Array.isArray(p) ? (p[0] as number) - (p[1] as number) : (p.minuend as number) - (p.subtrahend as number)),
  sum: (p) => (p as number[]).reduce((a, b) => a + b, 0),
  get_data: () => ["hello", 5],
  update: () => {
    notified.push("update");
    return null;
  },
  notify_hello: () => {
    notified.push("notify_hello");
    return null;
  },
  notify_sum: () => {
    notified.push("notify_sum");
    return null;
  },
};
const specCall = (c: CoreCall): ItemOutcome => {
  const fn = specMethods[c.method];
  return fn ? { ok: true, json: JSON.stringify(fn(c.params)) } : { ok: false, error: { code: -32601, message: `Method not found: ${c.method}` } };
};
/** The spec's methods in place of the RpcService handlers. */
const specHandlers: JsonRpcHandlers = {
  malformed: () => ({ outcome: { ok: true, value: undefined }, headers: {} }),
  async call(c) {
    const o = specCall(c);
    return {
      outcome: o.ok ? { ok: true, value: o.json } : { ok: false, error: new GatewayError("method_not_found", o.error.message) },
      headers: {},
    };
  },
  async batch(calls) {
    return { outcome: { ok: true, value: calls.map(specCall) }, headers: {} };
  },
};

const err = (code: number, message: string, id: JsonValue) => ({
  jsonrpc: "2.0",
  error: { code, message: expect.stringMatching(new RegExp("^" + message)) },
  id,
});
const ok = (result: JsonValue, id: JsonValue) => ({ jsonrpc: "2.0", result, id });

// [request text, expected response (undefined: nothing returned)]
const examples: [string, string, unknown][] = [
  ["positional 1", '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}', ok(19, 1)],
  ["positional 2", '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}', ok(-19, 2)],
  ["named 1", '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}', ok(19, 3)],
  ["named 2", '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}', ok(19, 4)],
  ["notification", '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}', undefined],
  ["notification of unknown", '{"jsonrpc": "2.0", "method": "foobar"}', undefined],
  ["non-existent method", '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', err(-32601, "Method not found", "1")],
  ["invalid JSON", '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', err(-32700, "Parse error", null)],
  ["invalid Request object", '{"jsonrpc": "2.0", "method": 1, "params": "bar"}', err(-32600, "Invalid Request", null)],
  [
    "batch, invalid JSON",
    '[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n  {"jsonrpc": "2.0", "method"\n]',
    err(-32700, "Parse error", null),
  ],
  ["empty Array", "[]", err(-32600, "Invalid Request", null)],
  ["invalid batch, not empty", "[1]", [err(-32600, "Invalid Request", null)]],
  ["invalid batch", "[1,2,3]", [err(-32600, "Invalid Request", null), err(-32600, "Invalid Request", null), err(-32600, "Invalid Request", null)]],
  [
    "batch",
    `[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]`,
    [ok(7, "1"), ok(19, "2"), err(-32600, "Invalid Request", null), err(-32601, "Method not found", "5"), ok(["hello", 5], "9")],
  ],
  [
    "batch, all notifications",
    '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]',
    undefined,
  ],
];

describe("JSON-RPC 2.0 specification examples (envelope with the spec's methods)", () => {
  for (const [name, request, expected] of examples) {
    it(name, async () => {
      const answer = await handleJsonRpc(request, specHandlers, 40);
      if (expected === undefined) {
        expect(answer.body).toBeUndefined();
        expect(answer.status).toBe(204);
      } else {
        expect(JSON.parse(answer.body!)).toEqual(expected);
      }
    });
  }
  it("notifications were executed", () => {
    expect(notified).toEqual(expect.arrayContaining(["update", "notify_hello", "notify_sum"]));
  });
});

describe("JSON-RPC 2.0 specification examples against the gateway", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url + "/";
  });
  afterAll(() => gw?.close());

  const methodFree = new Set([
    "notification of unknown",
    "non-existent method",
    "invalid JSON",
    "invalid Request object",
    "batch, invalid JSON",
    "empty Array",
    "invalid batch, not empty",
    "invalid batch",
  ]);
  for (const [name, request, expected] of examples.filter(([n]) => methodFree.has(n))) {
    it(name, async () => {
      const res = await postJson(url, request);
      if (expected === undefined) {
        expect(res.status).toBe(204);
        expect(res.text).toBe("");
      } else {
        expect(res.json).toEqual(expected);
        expect(res.status).toBe(Array.isArray(expected) ? 200 : name === "non-existent method" ? 200 : 400);
      }
    });
  }
});
