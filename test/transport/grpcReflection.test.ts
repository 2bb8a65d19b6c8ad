// gRPC server reflection (#31): `buf curl` (npm @bufbuild/buf) with no proto files lists both services'
// methods and calls one, over gRPC, learning the schema from the gateway — as grpcurl does.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

const run = promisify(execFile);
const bufCurl = async (...args: string[]): Promise<string> =>
  (await run("node_modules/.bin/buf", ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 60_000 })).stdout;

describe("gRPC server reflection", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
  });

  for (const protocol of ["grpc-v1", "grpc-v1alpha"]) {
    it(`buf curl --list-methods (${protocol}) lists every method of both services, with no schema`, async () => {
      const methods = (await bufCurl("--reflect-protocol", protocol, "--list-methods", url)).trim().split("\n");
      expect(methods).toEqual(
        expect.arrayContaining([
          "chaingateway.rpc.v1.RpcService/Call",
          "chaingateway.rpc.v1.RpcService/GetChainId",
          "chaingateway.zkt.v1.ZktService/WriteMessage",
          "chaingateway.zkt.v1.ZktService/GetTransactionStatus",
        ]),
      );
    });
  }

  it("buf curl calls a method with the schema it got by reflection", async () => {
    const out = JSON.parse(await bufCurl("-d", "{}", `${url}/chaingateway.rpc.v1.RpcService/GetChainId`)) as { chainId: string };
    expect(out.chainId).toBe("0x133edcb");
    const call = JSON.parse(await bufCurl("-d", '{"method": "platform_getValidatorList"}', `${url}/chaingateway.rpc.v1.RpcService/Call`)) as {
      result: { code: number };
    };
    expect(call.result.code).toBe(200);
  });
});
