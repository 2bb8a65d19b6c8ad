// `npm start` runs the esbuild bundle (`npm run build` → dist/main.mjs): it must do what the source does,
// including the parts that load files next to it at run time (the solc worker for deploys).
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGatewayProcess, type GatewayProcess } from "./helpers/gatewayProcess.js";
import { postJson } from "./helpers/gateway.js";
import { TOKEN_SOURCE } from "./fixtures/contracts.js";

describe("the npm start bundle", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
    gw = await startGatewayProcess({ DATA_DIR: mkdtempSync(join(tmpdir(), "gw-bundle-")) }, "bundle");
  }, 120_000);
  afterAll(async () => {
    gw?.child.kill("SIGTERM");
    await gw?.exited;
  });

  it("answers JSON-RPC on the embedded node", async () => {
    const res = await postJson(gw.url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x133edcb" });
    const head = await postJson(gw.url, { jsonrpc: "2.0", id: 2, method: "eth_blockNumber", params: [] });
    expect((head.json as { result: string }).result).toMatch(/^0x[0-9a-f]+$/);
  });

  it("journals a ZKT write and deploys from source (both workers load)", async () => {
    const write = await postJson(gw.url + "/zkt/try-it-out", { arguments: "from the bundle" });
    expect(write.json, JSON.stringify(write.json)).toMatchObject({ success: true });
    const deploy = await postJson(gw.url + "/zkt/try-it-out", { code: TOKEN_SOURCE, arguments: ["Bundle", "BND", "1"] });
    expect(deploy.status).toBe(200);
    expect((deploy.json as { contractAddress: string }).contractAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
  }, 60_000);
});
