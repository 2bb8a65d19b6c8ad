// The README's runnable examples run here, against a real gateway, so they never rot.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

const run = promisify(execFile);

describe("docs/examples", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.close());

  it("getApiKey.sh issues a key with its wallet and endpoints", async () => {
    const { stdout } = await run("bash", ["docs/examples/getApiKey.sh"], { env: { ...process.env, GATEWAY_URL: gw.network("testnet").url } });
    const key = JSON.parse(stdout) as { apiKey: string; walletAddress: string; label: string };
    expect(key).toMatchObject({ label: "my app", apiKey: expect.stringMatching(/^cgw_/), walletAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
  });

  it("webSocketViem.ts and webSocketEthers.ts each see three consecutive blocks", async () => {
    for (const example of ["webSocketViem.ts", "webSocketEthers.ts"]) {
      const { stdout } = await run(process.execPath, ["--import", "tsx", `docs/examples/${example}`], {
        env: { ...process.env, GATEWAY_URL: gw.network("testnet").url },
        timeout: 30_000,
      });
      const out = JSON.parse(stdout) as { chainId: number; blocks: number[] };
      expect(out.chainId, example).toBe(20180427);
      expect(out.blocks[1], example).toBe(out.blocks[0]! + 1);
      expect(out.blocks[2], example).toBe(out.blocks[1]! + 1);
    }
  });

  it("jsonRpcEthers.ts reads chain id, block number and validators", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "docs/examples/jsonRpcEthers.ts"], {
      env: { ...process.env, GATEWAY_URL: gw.network("testnet").url },
    });
    expect(JSON.parse(stdout)).toMatchObject({ chainId: 20180427, validators: { code: 200, value: ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"] } });
  });

  it("connectClient.ts runs every ZKT operation over gRPC with the key's wallet", async () => {
    const { apiKey } = await gw.keys.create({ label: "docs grpc" });
    const { stdout } = await run(process.execPath, ["--import", "tsx", "docs/examples/connectClient.ts"], {
      env: { ...process.env, GATEWAY_URL: gw.network("testnet").url, API_KEY: apiKey },
    });
    expect(JSON.parse(stdout)).toMatchObject({
      chainId: 20180427,
      hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      writeStatus: "success",
      event: "Bumped",
      count: ["5"],
    });
  });

  it("jsonRpc.sh: a call, a batch, a platform_ method, and a refused public write", async () => {
    const { stdout } = await run("bash", ["docs/examples/jsonRpc.sh"], { env: { ...process.env, GATEWAY_URL: gw.network("testnet").url } });
    const [call, batch, tokens, write] = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(call!.result).toMatch(/^0x/);
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0x133edcb" },
      { jsonrpc: "2.0", id: 2, result: "20180427" },
    ]);
    expect((tokens!.result as { code: number }).code).toBe(200);
    expect((write!.error as { code: number; message: string }).message).toMatch(/needs an API key/);
  });

  it("zkt.sh runs the three ZKT operations with curl", async () => {
    const { stdout } = await run("bash", ["docs/examples/zkt.sh"], { env: { ...process.env, GATEWAY_URL: gw.network("testnet").url } });
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    expect(lines.every((l) => l.success === true)).toBe(true);
    expect(lines[2]!.output).toEqual(["1000"]);
    expect((lines[3]!.receipt as { status: string }).status).toBe("success");
  });

  it("sponsoredTransaction.ts sponsors an unfunded sender", async () => {
    const { apiKey, info } = await gw.keys.create({ label: "docs" });
    const { stdout } = await run(process.execPath, ["--import", "tsx", "docs/examples/sponsoredTransaction.ts"], {
      env: { ...process.env, GATEWAY_URL: gw.network("testnet").url, API_KEY: apiKey },
    });
    expect(JSON.parse(stdout)).toMatchObject({ status: 1, sponsor: info.walletAddress });
  });
});
