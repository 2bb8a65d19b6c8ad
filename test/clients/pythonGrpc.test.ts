// A team outside TypeScript (#53): a Python client generated from proto/ with Debian's protoc and its gRPC
// Python plugin (python3-grpcio at run time; .ci/run installs them), calling RpcService.Call,
// SubscribeNewHeads and a ZKT write over gRPC with a key. docs/CLIENTS.md says how Go, Python or Java
// generate theirs.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const PYTHON = "/usr/bin/python3";
const ready = (() => {
  if (!existsSync("/usr/bin/protoc") || !existsSync("/usr/bin/grpc_python_plugin")) return false;
  try {
    execFileSync(PYTHON, ["-c", "import grpc, google.protobuf"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!ready && !process.env.CI)("a generated Python gRPC client", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.close());

  it("calls RpcService.Call, streams SubscribeNewHeads and writes through ZKT with a key", { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), "py-client-"));
    execFileSync("/usr/bin/protoc", [
      "-I",
      "proto",
      "-I",
      "/usr/include",
      `--python_out=${out}`,
      `--grpc_python_out=${out}`,
      "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
      "chaingateway/rpc/v1/rpc.proto",
      "chaingateway/zkt/v1/zkt.proto",
    ]);
    const url = gw.network("testnet").url;
    const apiKey = ((await postJson(url + "/portal/keys", { label: "python" })).json as { apiKey: string }).apiKey;
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, ["test/clients/python_client.py", out, new URL(url).host, apiKey], { timeout: 90_000 }, (err, so, se) =>
        err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so),
      ),
    );
    const got = JSON.parse(stdout) as {
      chainId: string;
      blockNumberJson: string;
      heads: number[];
      write: { hash: string; queueId: string; status: string };
      badKey: string;
    };
    expect(got.chainId).toBe("0x133edcb");
    expect(got.blockNumberJson).toMatch(/^"0x[0-9a-f]+"$/);
    expect(got.heads).toHaveLength(2);
    expect(got.heads[1]).toBeGreaterThan(got.heads[0]!);
    expect(got.write).toMatchObject({ hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), status: "success" });
    expect(got.badKey).toBe("UNAUTHENTICATED");
  });
});
