// A team outside TypeScript (#53): a Python client generated from proto/ with Debian's protoc and its gRPC
// Python plugin (python3-grpcio at run time; .ci/run installs them), calling RpcService.Call,
// SubscribeNewHeads and a ZKT write over gRPC with a key. docs/CLIENTS.md says how Go, Python or Java
// generate theirs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { pythonGrpcReady, runPythonClient } from "../helpers/pythonClient.js";

describe.skipIf(!pythonGrpcReady && !process.env.CI)("a generated Python gRPC client", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.close());

  it("calls RpcService.Call, streams SubscribeNewHeads and writes through ZKT with a key", { timeout: 120_000 }, async () => {
    const url = gw.network("testnet").url;
    const apiKey = ((await postJson(url + "/portal/keys", { label: "python" })).json as { apiKey: string }).apiKey;
    const got = await runPythonClient(new URL(url).host, apiKey);
    expect(got.chainId).toBe("0x133edcb");
    expect(got.blockNumberJson).toMatch(/^"0x[0-9a-f]+"$/);
    expect(got.heads).toHaveLength(2);
    expect(got.heads[1]).toBeGreaterThan(got.heads[0]!);
    expect(got.write).toMatchObject({ hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), status: "success" });
    expect(got.badKey).toBe("UNAUTHENTICATED");
  });
});
