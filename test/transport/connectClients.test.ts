// The generated Connect client reaches the same handlers over gRPC (h2c), gRPC-Web, Connect binary and
// Connect JSON — on the same port as plain JSON-RPC POST /.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectError, Code, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { RpcService, RpcErrorSchema } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("Connect clients on the JSON-RPC port", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  const transports: Record<string, () => Transport> = {
    "gRPC (h2c)": () => createGrpcTransport({ baseUrl: url }),
    "gRPC-Web": () => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }),
    "Connect binary": () => createConnectTransport({ baseUrl: url, httpVersion: "1.1", useBinaryFormat: true }),
    "Connect JSON": () => createConnectTransport({ baseUrl: url, httpVersion: "1.1", useBinaryFormat: false }),
    "Connect JSON over h2c": () => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: false }),
  };

  for (const [name, make] of Object.entries(transports)) {
    it(`${name}: Call, Batch, typed methods and errors`, async () => {
      const client = createClient(RpcService, make());
      const chain = await client.getChainId({});
      expect(chain.chainId).toBe("0x133edcb");
      expect(chain.chainIdDecimal).toBe(20180427n);

      const call = await client.call({ method: "eth_chainId", params: fromJson(ListValueSchema, []) });
      expect(toJson(ValueSchema, call.result!)).toBe("0x133edcb");

      const bn = await client.getBlockNumber({});
      expect(bn.blockNumber).toMatch(/^0x[0-9a-f]+$/);
      const bal = await client.getBalance({ address: "0x0000000000000000000000000000000000000000" });
      expect(bal.balance).toMatch(/^0x[0-9a-f]+$/);

      const batch = await client.batch({
        calls: [
          { method: "eth_blockNumber", params: fromJson(ListValueSchema, []) },
          { method: "eth_blobBaseFee", params: fromJson(ListValueSchema, []) },
        ],
      });
      expect(batch.items).toHaveLength(2);
      expect(toJson(ValueSchema, batch.items[0]!.result!)).toMatch(/^0x/);
      expect(batch.items[1]!.error?.code).toBe(-32601);

      // A JSON-RPC error is a Connect error carrying the same code and message as an RpcError detail.
      const err = await client.call({ method: "eth_accounts", params: fromJson(ListValueSchema, []) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      const ce = err as ConnectError;
      expect(ce.code).toBe(Code.Unimplemented);
      const [detail] = ce.findDetails(RpcErrorSchema);
      expect(detail?.code).toBe(-32601);

      const bad = await client.getBalance({ address: "0x12" }).catch((e: unknown) => e as ConnectError);
      expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
      expect((bad as ConnectError).rawMessage).toMatch(/Invalid params: address must be a 0x-prefixed 20-byte hex address/);

      const write = await client.sendRawTransaction({ rawTransaction: "0x00" }).catch((e: unknown) => e as ConnectError);
      expect((write as ConnectError).rawMessage).toMatch(/needs an API key/);
      // permission_denied, not failed_precondition (#68).
      expect((write as ConnectError).code).toBe(Code.PermissionDenied);
    });
  }

  it("plain POST / on the same port answers JSON-RPC", async () => {
    const res = await postJson(url + "/", { jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 7, result: "0x133edcb" });
  });

  it("a Connect path called without a Connect content type (curl's default) gets 415 with a body saying what to send", async () => {
    for (const headers of [{}, { "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }] as Record<string, string>[]) {
      const res = await fetch(url + "/chaingateway.rpc.v1.RpcService/GetChainId", { method: "POST", headers, body: new Uint8Array([123, 125]) });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/application\/json .*application\/grpc/) });
    }
    // JSON-RPC and ZKT REST do not depend on the content type.
    expect((await fetch(url + "/", { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' })).status).toBe(200);
  });
});
