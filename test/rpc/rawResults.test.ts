// A proxied result reaches the client as the node's own JSON text (no parse and re-serialise in between), on
// the way through and from the cache, and Connect clients still get the parsed value.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startTestGateway } from "../helpers/gateway.js";

const resultText = (body: string): string => {
  const at = body.indexOf('"result":');
  return body.slice(at + 9, -1);
};

describe("raw results", () => {
  let node: EmbeddedNode;
  let gw: Gateway;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    gw = await startTestGateway({ mutate: (c) => (c.networks[0]!.upstreams = [node.url]) });
    // Blocks must be mined past the cache depth for block 0x1 to be cacheable.
    await new Promise((r) => setTimeout(r, 1200));
  });
  afterAll(async () => {
    await gw?.close();
    await node?.stop();
  });

  it("a block comes back as the node's own bytes, first proxied then from the cache", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: "a", method: "eth_getBlockByNumber", params: ["0x1", true] });
    const post = async (url: string) => (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: call })).text();
    const direct = resultText(await post(node.url));
    const first = await post(gw.network("testnet").url + "/");
    const second = await post(gw.network("testnet").url + "/");
    expect(first.startsWith('{"jsonrpc":"2.0","id":"a","result":')).toBe(true);
    expect(resultText(first)).toBe(direct);
    expect(resultText(second)).toBe(direct);
    expect(JSON.parse(second)).toEqual({ jsonrpc: "2.0", id: "a", result: JSON.parse(direct) });
  });

  it("Connect callers get the same block as a parsed value", async () => {
    const client = createClient(RpcService, createConnectTransport({ baseUrl: gw.network("testnet").url, httpVersion: "1.1" }));
    const res = await client.call({ method: "eth_getBlockByNumber", params: fromJson(ListValueSchema, ["0x1", false]) });
    const direct = (await (
      await fetch(node.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x1", false] }),
      })
    ).json()) as { result: unknown };
    expect(toJson(ValueSchema, res.result!)).toEqual(direct.result);
  });
});
