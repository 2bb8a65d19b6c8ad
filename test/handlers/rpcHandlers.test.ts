// The RpcService handlers' own rules, the same over every wire: results as JSON text for a caller that sends
// params as JSON text, and a failure of the whole request (the node unreachable for every call of a batch)
// answered once for the batch — a JSON-RPC 503 with id null, a Connect Unavailable — not per item.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";

const balance = (i: number) => ["0x" + (0xbad00 + i).toString(16).padStart(40, "0"), "latest"];

describe("RpcService handlers", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.coalesceReads = false;
      },
    });
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  for (const [wire, make] of [
    ["gRPC", () => createGrpcTransport({ baseUrl: url })],
    ["Connect JSON", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
  ] as const) {
    it(`${wire}: params_json gets result_json, the node's text unparsed; params gets a Value`, async () => {
      const client = createClient(RpcService, make());
      const asJson = await client.call({ method: "eth_getBalance", paramsJson: JSON.stringify(balance(1)) });
      expect(asJson.resultJson).toBe('"0x0"');
      expect(asJson.result).toBeUndefined();
      const asValue = await client.call({ method: "eth_getBalance", params: fromJson(ListValueSchema, balance(1)) });
      expect(toJson(ValueSchema, asValue.result!)).toBe("0x0");
      expect(asValue.resultJson).toBe("");
      const batch = await client.batch({
        calls: [
          { method: "eth_chainId", paramsJson: "[]" },
          { method: "eth_chainId", params: fromJson(ListValueSchema, []) },
        ],
      });
      expect(batch.items.map((i) => [i.resultJson, i.result ? toJson(ValueSchema, i.result) : undefined])).toEqual([
        ['"0x133edcb"', undefined],
        ["", "0x133edcb"],
      ]);
      const bad = await client.call({ method: "eth_chainId", paramsJson: "[1," }).catch((e: unknown) => e as ConnectError);
      expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
      expect((bad as ConnectError).rawMessage).toMatch(/params_json is not valid JSON/);
    });
  }

  it("a node unreachable for every call of a batch fails the batch once: JSON-RPC 503 with id null, Connect Unavailable", async () => {
    const batch = [0, 1, 2].map((i) => ({ jsonrpc: "2.0", id: i + 1, method: "eth_getBalance", params: balance(10 + i) }));
    proxy.failNext(1, /0bad0/);
    const answer = await postJson(url + "/", batch);
    expect(answer.status).toBe(503);
    expect(answer.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32603 } });

    proxy.failNext(1, /0bad0/);
    const client = createClient(RpcService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const err = await client
      .batch({ calls: [0, 1, 2].map((i) => ({ method: "eth_getBalance", paramsJson: JSON.stringify(balance(10 + i)) })) })
      .catch((e: unknown) => e as ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);

    // With one call answered locally, the batch is answered item by item.
    proxy.failNext(1, /0bad0/);
    const mixed = await postJson(url + "/", [{ jsonrpc: "2.0", id: "c", method: "eth_chainId", params: [] }, ...batch]);
    expect(mixed.status).toBe(200);
    const items = mixed.json as { id: unknown; result?: string; error?: { code: number } }[];
    expect(items[0]).toEqual({ jsonrpc: "2.0", id: "c", result: "0x133edcb" });
    for (const item of items.slice(1)) expect(item.error?.code).toBe(-32603);
  });
});
