// JSON-RPC 2.0 wants the request's id back exactly (#29): JSON.parse rounds big integers and normalises
// number text, so ids are echoed as their own text. And an empty method is one rule on every transport.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type { Gateway } from "../../src/gateway.js";
import { numericIdTexts } from "../../src/transport/jsonrpc/rawIds.js";
import { RpcService, RpcErrorSchema } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startTestGateway } from "../helpers/gateway.js";

const post = async (url: string, body: string): Promise<string> =>
  (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })).text();

describe("numericIdTexts", () => {
  it("finds the top-level id's number text, skipping strings, nested ids and escapes", () => {
    expect(numericIdTexts('{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}', false)).toEqual(["9007199254740993"]);
    expect(numericIdTexts('{ "params" : [{"id": 5}], "method":"x\\"id\\":7", "id" : 1.0e2 }', false)).toEqual(["1.0e2"]);
    expect(numericIdTexts('{"\\u0069d": -0, "x": "}"}', false)).toEqual(["-0"]);
    expect(numericIdTexts('{"id":"7"}', false)).toEqual([undefined]);
    expect(numericIdTexts('[{"id":1},2,"s",{"method":"m"},{"a":{"id":3},"id":12345678901234567890123},[{"id":9}],{"id":null}]', true)).toEqual([
      "1",
      undefined,
      undefined,
      undefined,
      "12345678901234567890123",
      undefined,
      undefined,
    ]);
  });
});

describe("JSON-RPC ids and empty methods over the wire", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("echoes a numeric id's exact text: past 2^53, huge, fractional, exponent, on results and errors", async () => {
    for (const id of ["9007199254740993", "12345678901234567890123", "1.0", "1e2", "-0", "7"]) {
      expect(await post(url, `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`)).toBe(`{"jsonrpc":"2.0","id":${id},"result":"0x133edcb"}`);
      expect(await post(url, `{"jsonrpc":"2.0", "id" : ${id}, "method":"no_such","params":[]}`)).toMatch(
        new RegExp(`^\\{"jsonrpc":"2\\.0","id":${id.replace(".", "\\.")},"error"`),
      );
    }
  });

  it("keeps two ids distinct in a batch even when JavaScript numbers would make them equal", async () => {
    const text = await post(
      url,
      '[{"jsonrpc":"2.0","id":9007199254740993,"method":"eth_chainId"},{"jsonrpc":"2.0","id":9007199254740992,"method":"eth_chainId"}]',
    );
    expect(text).toBe('[{"jsonrpc":"2.0","id":9007199254740993,"result":"0x133edcb"},{"jsonrpc":"2.0","id":9007199254740992,"result":"0x133edcb"}]');
    // "id" keys inside params, a notification between, an exponent id: each element keeps its own id's text.
    const mixed = await post(
      url,
      '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"eth_chainId","params":[{"id":5}]},{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[{"id":7}]},{"jsonrpc":"2.0","id":3e0,"method":"eth_chainId"}]',
    );
    expect(mixed).toBe(
      '[{"jsonrpc":"2.0","id":1,"result":"0x133edcb"},{"jsonrpc":"2.0","id":2,"result":"0x133edcb"},{"jsonrpc":"2.0","id":3e0,"result":"0x133edcb"}]',
    );
  });

  it("an empty method is -32600 Invalid Request over JSON-RPC and over Connect and gRPC alike", async () => {
    const rpc = JSON.parse(await post(url, '{"jsonrpc":"2.0","id":1,"method":"","params":[]}')) as { error: { code: number } };
    expect(rpc.error.code).toBe(-32600);
    for (const transport of [createConnectTransport({ baseUrl: url, httpVersion: "1.1" }), createGrpcTransport({ baseUrl: url })]) {
      const err = await createClient(RpcService, transport)
        .call({ method: "" })
        .catch((e: unknown) => e as ConnectError);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).findDetails(RpcErrorSchema)[0]?.code).toBe(-32600);
    }
  });
});
