// A node's errors as each transport answers them (#55 item 6, item 2 over Connect): the node's -32001
// ("Resource not found") must not read as ours ("unknown or revoked API key") on JSON-RPC, and "not found"
// errors are Connect's not_found, not failed_precondition; params a node cannot read are invalid_argument.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { fromJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { RpcErrorSchema, RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { FAKE_CHAIN_ID, type FakeNode, startFakeNode } from "../helpers/fakeNode.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const NOT_FOUND_ADDRESS = "0x0000000000000000000000000000000000000404";

async function connectFailure(url: string, method: string, params: unknown[]): Promise<ConnectError> {
  const client = createClient(RpcService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
  const err = await client.call({ method, params: fromJson(ListValueSchema, params as never) }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("a node's -32001", () => {
  let node: FakeNode;
  let gw: Gateway;
  beforeAll(async () => {
    node = await startFakeNode({ chainId: FAKE_CHAIN_ID });
    gw = await startTestGateway({ mutate: (c) => void (c.networks[0]!.upstreams = [node.url]) });
  });
  afterAll(async () => {
    await gw?.close();
    node?.close();
  });

  it("is -32000 on JSON-RPC (-32001 is the gateway's unknown key) and not_found on Connect", async () => {
    const url = gw.network("testnet").url;
    const res = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [NOT_FOUND_ADDRESS, "latest"] });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "Resource not found" } });
    const err = await connectFailure(url, "eth_getBalance", [NOT_FOUND_ADDRESS, "latest"]);
    expect(err.code).toBe(Code.NotFound);
    expect(err.findDetails(RpcErrorSchema)[0]?.code).toBe(-32000);
  });
});

describe("the embedded node's errors over Connect", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('"filter not found" is not_found (was failed_precondition)', async () => {
    const err = await connectFailure(gw.network("testnet").url, "eth_getFilterChanges", ["0x1234"]);
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toMatch(/filter not found/);
  });

  it("params the node cannot read are invalid_argument (was internal, HTTP 500)", async () => {
    const url = gw.network("testnet").url;
    for (const paramsJson of ['["\\ud800","latest"]', "[".repeat(2_000) + "]".repeat(2_000)]) {
      const res = await postJson(url + "/chaingateway.rpc.v1.RpcService/Call", { method: "eth_getBalance", paramsJson });
      expect(res.status, paramsJson.slice(0, 20)).toBe(400);
      expect(res.json).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/the node could not read them/) });
    }
  });
});
