// `npm start` runs the esbuild bundle (`npm run build` → dist/main.mjs): it must do what the source does,
// including the parts that load files next to it at run time (the solc worker for deploys, the WebSocket
// fan-out shard).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startGatewayProcess, type GatewayProcess } from "./helpers/gatewayProcess.js";
import { postJson } from "./helpers/gateway.js";
import { TOKEN_SOURCE } from "./fixtures/contracts.js";

describe("the npm start bundle", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
    // Every WebSocket on a shard, so that dist/wsShard.mjs is what serves it.
    gw = await startGatewayProcess({ DATA_DIR: mkdtempSync(join(tmpdir(), "gw-bundle-")), WS_SHARDS: "1", WS_SOCKETS_IN_PROCESS: "0" }, "bundle");
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

  it("serves a WebSocket subscription from its fan-out shard (dist/wsShard.mjs)", async () => {
    const ws = new WebSocket(gw.url.replace("http://", "ws://"));
    const heads: string[] = [];
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as { params?: { result: { number: string } } };
      if (msg.params) heads.push(msg.params.result.number);
    });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    for (let i = 0; i < 100 && heads.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(heads.length).toBeGreaterThanOrEqual(2);
    const shards = execFileSync("ps", ["-o", "args=", "--ppid", String(gw.child.pid)], { encoding: "utf8" });
    expect(shards).toMatch(/dist\/wsShard\.mjs/);
    ws.close();
  });

  it("npm start itself runs on Node 24 and logs the version at start (#30)", async () => {
    // Its own process group, so that npm, its shell and the gateway stop together.
    const child = spawn("npm", ["start", "--silent"], {
      env: {
        ...process.env,
        NETWORKS: "testnet",
        TESTNET_PORT: "0",
        LOG_LEVEL: "info",
        EMBEDDED_STATE: "false",
        DATA_DIR: mkdtempSync(join(tmpdir(), "gw-npm-start-")),
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => void (out += d));
    child.stderr!.on("data", (d: Buffer) => void (out += d));
    const exited = new Promise((r) => child.once("exit", r));
    try {
      for (let i = 0; i < 600 && !/testnet \(chain id \d+\): http/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(/testnet \(chain id \d+\): http/);
      expect(out).toMatch(/"node":"v24\.\d+\.\d+"/);
    } finally {
      process.kill(-child.pid!, "SIGTERM");
      await exited;
    }
  }, 90_000);
});
