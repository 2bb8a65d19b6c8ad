// `npm start` runs the esbuild bundle (`npm run build` → dist/main.mjs): it must do what the source does,
// including the parts that load files next to it at run time (the PGlite initdb worker on a fresh data
// directory, the solc worker for deploys).
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGatewayProcess, type GatewayProcess } from "./helpers/gatewayProcess.js";
import { postJson } from "./helpers/gateway.js";
import { TOKEN_SOURCE } from "./fixtures/contracts.js";
import { SqliteSubmissionStore } from "../src/store/sqliteSubmissionStore.js";
import { MasterSeed } from "../src/keys/masterSeed.js";

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

  it("exits 1 and stops its embedded node when the store's PGlite worker dies, and restarts with the journal intact", async () => {
    // A copy of the bundle whose PGlite worker dies as it stores a write's Idempotency-Key answer, as an abort
    // or out-of-memory in the WebAssembly would (inside the project, so node_modules resolves as for dist/).
    // The write itself is journaled by then (SQLite): accepted, though the client hears of an unknown outcome.
    const dir = "test-artifacts/crash-bundle";
    rmSync(dir, { recursive: true, force: true });
    cpSync("dist", dir, { recursive: true });
    renameSync(join(dir, "pgliteWorker.mjs"), join(dir, "pgliteWorkerReal.mjs"));
    writeFileSync(
      join(dir, "pgliteWorker.mjs"),
      `import { parentPort } from "node:worker_threads";
parentPort.on("message", (m) => { if (m.op === "query" && /update idempotency set status/i.test(m.sql)) process.exit(70); });
await import("./pgliteWorkerReal.mjs");
`,
    );
    const dataDir = mkdtempSync(join(tmpdir(), "gw-crash-"));
    const crashing = await startGatewayProcess({ DATA_DIR: dataDir }, { bundle: join(dir, "main.mjs") });
    const anvilPid = Number(/"pid":(\d+),"msg":"embedded anvil started"/.exec(crashing.log())?.[1]);
    try {
      expect(anvilPid).toBeGreaterThan(0);
      const before = await postJson(crashing.url, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
      expect(before.status).toBe(200);

      const write = await postJson(crashing.url + "/zkt/try-it-out", { arguments: "the store dies here" }, { "idempotency-key": "crash-1" });
      // Answered before the gateway stops, as an unknown outcome rather than a refusal.
      expect(write.status).toBe(500);
      expect(write.json, JSON.stringify(write.json)).toMatchObject({ success: false, errorCode: "INTERNAL_ERROR", error: expect.stringMatching(/may or may not have been accepted/) });
      expect(await crashing.exited).toBe(1);
      expect(crashing.log()).toMatch(/embedded store stopped: its worker thread exited with code 70.*gateway cannot continue/);
      expect(() => process.kill(anvilPid, 0)).toThrow();
    } finally {
      // Failing, the gateway may still run, with its node mining 4 blocks a second: it must not outlive the test
      // (one left behind once slowed every later benchmark on this machine).
      if (crashing.child.exitCode === null) {
        crashing.child.kill("SIGTERM");
        await crashing.exited;
      }
      if (anvilPid > 0) {
        try {
          process.kill(anvilPid, "SIGKILL");
        } catch {
          // already gone, as it should be
        }
      }
    }
    // The write the client could not be told about is in the journal (accepted, as the answer warned).
    const journal = await SqliteSubmissionStore.open(dataDir);
    expect(await journal.countBySignerSince(MasterSeed.load(dataDir).wallet(0).address, new Date(0))).toBe(1);
    await journal.close();

    // The real bundle on the same data directory opens the journal and takes writes again.
    const again = await startGatewayProcess({ DATA_DIR: dataDir }, "bundle");
    try {
      const ok = await postJson(again.url + "/zkt/try-it-out", { arguments: "after the restart" });
      expect(ok.json, JSON.stringify(ok.json)).toMatchObject({ success: true });

    } finally {
      again.child.kill("SIGTERM");
      await again.exited;
    }
  }, 120_000);
});

