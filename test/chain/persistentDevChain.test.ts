// The embedded dev chain survives a restart (#31): a contract deployed and written before a SIGTERM, and
// before a SIGKILL, is still there with its state afterwards; its queueId is still known; the demo token
// stays where it was.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startGatewayProcess, type GatewayProcess } from "../helpers/gatewayProcess.js";
import { postJson } from "../helpers/gateway.js";

const SOURCE = "pragma solidity ^0.8.20;\ncontract Counter { uint256 public n; function inc() public { n += 1; } }";
const ABI = [
  { type: "function", name: "n", inputs: [], outputs: [{ name: "", type: "uint256" }], stateMutability: "view" },
  { type: "function", name: "inc", inputs: [], outputs: [], stateMutability: "nonpayable" },
];

describe("a dev chain kept across restarts", () => {
  it("keeps contracts, their state, queueIds and the demo token through SIGTERM and SIGKILL", { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-persist-"));
    const env = { DATA_DIR: dataDir, BLOCK_TIME: "0.5", EMBEDDED_STATE: "true" };
    const start = (): Promise<GatewayProcess> => startGatewayProcess(env);
    const tokenOf = async (url: string) =>
      ((await postJson(url, { jsonrpc: "2.0", id: 1, method: "platform_getSupportedTokens", params: [] })).json as { result: { value: string[] } }).result
        .value;
    const count = async (url: string, to: string) =>
      ((await postJson(url + "/zkt/try-it-out", { to, abi: ABI, method: "n", arguments: [] })).json as { output: string[] }).output[0];
    const inc = async (url: string, to: string) =>
      expect((await postJson(url + "/zkt/try-it-out", { to, abi: ABI, method: "inc", arguments: [], wait: true })).json).toMatchObject({ success: true });

    let gw = await start();
    const deployed = (await postJson(gw.url + "/zkt/try-it-out", { code: SOURCE })).json as { contractAddress: string; queueId: string };
    const to = deployed.contractAddress;
    await inc(gw.url, to);
    const tokens = await tokenOf(gw.url);

    gw.child.kill("SIGTERM");
    await gw.exited;
    gw = await start();
    expect(await count(gw.url, to)).toBe("1");
    expect(await tokenOf(gw.url)).toEqual(tokens);
    const status = (await (await fetch(`${gw.url}/zkt/transactions/${deployed.queueId}`)).json()) as { status: string };
    expect(status.status).toBe("completed");

    await inc(gw.url, to);
    await new Promise((r) => setTimeout(r, 3_000)); // past the 2 s dump interval
    gw.child.kill("SIGKILL");
    await gw.exited;
    gw = await start();
    expect(await count(gw.url, to)).toBe("2");
    await inc(gw.url, to);
    expect(await count(gw.url, to)).toBe("3");
    gw.child.kill("SIGTERM");
    await gw.exited;
  });
});
