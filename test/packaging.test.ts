// The packed package (#53): `npm pack` (whose prepack builds dist/; here the suite's setup built it) ships it
// with the contracts and docs, no tests; the tarball, installed from npm's cache with the project's lockfile and no
// devDependencies, starts with its bin and serves both networks.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "./helpers/anvilProcess.js";
import { rpc } from "./helpers/gateway.js";
import { until } from "./helpers/until.js";

describe("the packed package", () => {
  it("holds dist, proto and docs, no tests, and its bin serves from an install of the tarball (npm's cache first)", { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "pack-"));
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { encoding: "utf8" }).replace(/^[^[]*/, ""),
    ) as {
      filename: string;
      files: { path: string }[];
    }[];
    const paths = packed[0]!.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "dist/main.mjs",
        "dist/wsShard.mjs",
        "dist/bodyCheckWorker.mjs",
        "dist/solcWorker.mjs",
        "bin/chain-gateway.mjs",
        "proto/chaingateway/rpc/v1/rpc.proto",
      ]),
    );
    expect(paths.some((p) => p.startsWith("docs/"))).toBe(true);
    expect(paths.filter((p) => /^(test|bench|src)\//.test(p))).toEqual([]);

    const root = join(dir, "installed");
    mkdirSync(root);
    execFileSync("tar", ["xzf", join(dir, packed[0]!.filename), "-C", root]);
    const pkg = join(root, "package");
    copyFileSync("package-lock.json", join(pkg, "package-lock.json"));
    // From npm's cache (npm ci filled it; the registry only for metadata the cache lacks), no devDependencies.
    try {
      execFileSync("npm", ["ci", "--prefer-offline", "--omit=dev", "--no-audit", "--no-fund"], { cwd: pkg, stdio: "pipe", encoding: "utf8" });
    } catch (err) {
      throw new Error(`npm ci --prefer-offline failed: ${String((err as { stderr?: string }).stderr ?? err).slice(-2_000)}`);
    }
    expect(readdirSync(join(pkg, "node_modules")).includes("vitest")).toBe(false);

    const [testnet, mainnet] = [await freePort(), await freePort()];
    const gw = spawn(process.execPath, [join(pkg, "bin", "chain-gateway.mjs")], {
      cwd: pkg,
      env: { ...process.env, DATA_DIR: join(dir, "data"), TESTNET_PORT: String(testnet), MAINNET_PORT: String(mainnet), LOG_LEVEL: "warn" },
      stdio: "ignore",
    });
    try {
      await until(async () => (await rpc<string>(`http://127.0.0.1:${mainnet}`, "eth_chainId").catch(() => undefined)) === "0x18a92", 60_000);
      expect(await rpc<string>(`http://127.0.0.1:${testnet}`, "eth_chainId")).toBe("0x133edcb");
    } finally {
      gw.kill("SIGTERM");
      await new Promise((r) => gw.once("exit", r));
    }
  });
});
