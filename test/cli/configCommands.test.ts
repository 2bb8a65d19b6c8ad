// `chain-gateway config check|print` (#67): the configuration a gateway would start with, checked or shown
// without starting anything, as an operator runs it from a clone (the bundle the suite's setup built).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** Runs bin/chain-gateway.mjs with only `env` beside PATH (none of the suite's settings). */
function cli(args: string[], env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, ["bin/chain-gateway.mjs", ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      encoding: "utf8",
      stdio: "pipe",
    });
    return { code: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("chain-gateway config", () => {
  it("check passes on every configuration example in deploy/", () => {
    const examples = readdirSync("deploy").filter((f) => f.endsWith(".config.json"));
    expect(examples).toContain("chain-gateway.config.json");
    for (const f of examples) {
      const r = cli(["config", "check", join("deploy", f)]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^ok: deploy\/.*, networks testnet, mainnet/);
    }
  });

  it("check on a broken file exits 1 naming each problem by its path", () => {
    const dir = mkdtempSync(join(tmpdir(), "config-check-"));
    const file = join(dir, "broken.json");
    const good = JSON.parse(readFileSync("deploy/chain-gateway.config.json", "utf8")) as {
      networks: { testnet: { upstreams: string[] } };
      maxBatchSize: number;
    };
    good.networks.testnet.upstreams = ["http://node-a:8545", "ftp://node-b"];
    good.maxBatchSize = 0;
    writeFileSync(file, JSON.stringify({ ...good, colour: "red" }));
    const r = cli(["config", "check", file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('networks.testnet.upstreams[1]: "ftp://node-b" is not an http(s) URL');
    expect(r.stderr).toContain("maxBatchSize: must be a positive integer");
    expect(r.stderr).toContain('unknown setting "colour"');
    // The environment is checked too.
    const env = cli(["config", "check", "deploy/chain-gateway.config.json"], { TESTNET_PORT: "eighty" });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('TESTNET_PORT: "eighty" is not a number');
  });

  it("print shows each setting with its source, secrets masked", () => {
    const phrase = "test test test test test test test test test test test junk";
    const r = cli(["config", "print", "deploy/chain-gateway.config.json"], {
      MASTER_MNEMONIC: phrase,
      DATABASE_URL: "postgresql://gateway:hunter2@db:5432/gateway",
      TESTNET_PORT: "9000",
    });
    expect(r.code, r.stderr).toBe(0);
    const line = (path: string) => r.stdout.split("\n").find((l) => l.startsWith(`${path} `));
    expect(line("networks.testnet.port")).toMatch(/9000 +\(env TESTNET_PORT\)$/);
    expect(line("host")).toMatch(/"0\.0\.0\.0" +\(file\)$/);
    expect(line("masterMnemonic")).toMatch(/"\*\*\*" +\(env MASTER_MNEMONIC\)$/);
    expect(line("databaseUrl")).toMatch(/"postgresql:\/\/gateway:\*\*\*@db:5432\/gateway" +\(env DATABASE_URL\)$/);
    expect(r.stdout).not.toContain("junk");
    expect(r.stdout).not.toContain("hunter2");
    // Without a file, defaults say so.
    const bare = cli(["config", "print"], { DATA_DIR: mkdtempSync(join(tmpdir(), "config-print-")) });
    expect(bare.stdout.split("\n").find((l) => l.startsWith("maxBatchSize "))).toMatch(/40 +\(default\)$/);
  });
});
