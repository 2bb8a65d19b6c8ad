import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, defaultConfig, loadConfig } from "../../src/config/config.js";

describe("config", () => {
  it("defaults: both networks, their chain ids and ports, embedded node, 1 MB, batch 40", () => {
    const c = loadConfig({}, mkdtempSync(join(tmpdir(), "cfg-")));
    expect(c.networks.map((n) => [n.name, n.chainId, n.port, n.upstreams.length])).toEqual([
      ["testnet", 20180427, 8545, 0],
      ["mainnet", 101010, 8546, 0],
    ]);
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.maxBatchSize).toBe(40);
  });

  it("env overrides file, file overrides defaults", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    writeFileSync(
      join(dir, "chain-gateway.config.json"),
      JSON.stringify({ maxBatchSize: 10, networks: { mainnet: { port: 9000, upstreams: ["http://node-a:8545"] } } }),
    );
    const c = loadConfig({ MAINNET_UPSTREAMS: "http://x:1,http://y:2" }, dir);
    expect(c.maxBatchSize).toBe(10);
    expect(c.networks.map((n) => n.name)).toEqual(["mainnet"]);
    expect(c.networks[0]!.port).toBe(9000);
    expect(c.networks[0]!.upstreams).toEqual(["http://x:1", "http://y:2"]);
  });

  it("merges a config file deeply: one field of a group keeps the group's other defaults (#30)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    writeFileSync(
      join(dir, "chain-gateway.config.json"),
      JSON.stringify({ rateLimit: { requestsPerWindow: 10 }, http: { maxConnections: 50 }, networks: { testnet: { validators: { source: "clique" } } } }),
    );
    const c = loadConfig({}, dir);
    expect(c.rateLimit).toMatchObject({ requestsPerWindow: 10, windowMs: 60_000, tryItOutRequestsPerWindow: 100, failMode: "open", decisionTimeoutMs: 250 });
    expect(c.http).toMatchObject({ maxConnections: 50, headersTimeoutMs: 60_000, keepAliveTimeoutMs: 65_000 });
    expect(c.networks[0]).toMatchObject({ name: "testnet", chainId: 20180427, validators: { source: "clique" } });
  });

  it("an env variable sets one field of a group over a file's other fields; unknown nested settings are named", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    writeFileSync(
      join(dir, "chain-gateway.config.json"),
      JSON.stringify({ rateLimit: { windowMs: 1000 }, networks: { testnet: { blockTimeSeconds: 2 }, mainnet: {} } }),
    );
    const c = loadConfig({ RATE_LIMIT: "7", BLOCK_TIME: "0.5", TESTNET_BLOCK_TIME: "3", COALESCE_READS: "0" }, dir);
    expect(c.rateLimit).toMatchObject({ requestsPerWindow: 7, windowMs: 1000, failMode: "open" });
    // TESTNET_BLOCK_TIME over BLOCK_TIME over the file.
    expect(c.networks.map((n) => [n.name, n.blockTimeSeconds])).toEqual([
      ["testnet", 3],
      ["mainnet", 0.5],
    ]);
    expect(c.coalesceReads).toBe(false);
    writeFileSync(join(dir, "chain-gateway.config.json"), JSON.stringify({ http: { maxConections: 5 } }));
    expect(() => loadConfig({ EMBEDDED_STATE: "maybe" }, dir)).toThrow(/unknown setting "http.maxConections"/);
    expect(() => loadConfig({ EMBEDDED_STATE: "maybe" }, dir)).toThrow(/EMBEDDED_STATE: "maybe" is not true or false/);
  });

  it("reports every problem at once, naming the setting", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ maxBatchSize: -1, colour: "red", networks: { testnet: { port: 8546 }, mainnet: {}, devnet: {} } }));
    let err: unknown;
    try {
      loadConfig({ CONFIG_FILE: "bad.json", TESTNET_UPSTREAMS: "ftp://nope", MAINNET_FEE_MODE: "free" }, dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join("\n");
    expect(problems).toMatch(/unknown setting "colour"/);
    expect(problems).toMatch(/unknown network "devnet"/);
    expect(problems).toMatch(/maxBatchSize: must be a positive integer/);
    expect(problems).toMatch(/networks.testnet.upstreams\[0\]: "ftp:\/\/nope" is not an http\(s\) URL/);
    expect(problems).toMatch(/networks.mainnet.feeMode: must be "auto", "zero" or "market"/);
    expect(problems).toMatch(/networks.mainnet.port: 8546 is already used by testnet/);
  });

  it("cordoned upstreams are some of the network's, never all (#67)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    const file = (cordoned: string[]) => {
      writeFileSync(join(dir, "c.json"), JSON.stringify({ networks: { testnet: { upstreams: ["http://a:1", "http://b:2"], cordoned } } }));
      return () => loadConfig({ CONFIG_FILE: "c.json" }, dir);
    };
    expect(file(["http://b:2"])().networks[0]!.cordoned).toEqual(["http://b:2"]);
    expect(file(["http://c:3"])).toThrow(/networks.testnet.cordoned: "http:\/\/c:3" is not one of its upstreams/);
    expect(file(["http://a:1", "http://b:2"])).toThrow(/every upstream is cordoned; at least one must stay in service/);
  });

  it("per-method upstream policies (#67): by name or prefix, each field checked", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ methodPolicies: { eth_getLogs: { timeoutMs: 30_000, hedge: false }, "debug_*": { retries: 0 } } }));
    expect(loadConfig({ CONFIG_FILE: "ok.json" }, dir).methodPolicies).toEqual({ eth_getLogs: { timeoutMs: 30_000, hedge: false }, "debug_*": { retries: 0 } });
    expect(defaultConfig().methodPolicies).toEqual({});
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ methodPolicies: { eth_call: { timeoutMs: -1, tries: 2 }, "bad name": {} } }));
    expect(() => loadConfig({ CONFIG_FILE: "bad.json" }, dir)).toThrow(/methodPolicies\.eth_call\.timeoutMs: must be a positive integer/);
    expect(() => loadConfig({ CONFIG_FILE: "bad.json" }, dir)).toThrow(/unknown setting "methodPolicies\.eth_call\.tries"/);
  });

  it("rejects a non-numeric port from env", () => {
    expect(() => loadConfig({ TESTNET_PORT: "eighty" }, mkdtempSync(join(tmpdir(), "cfg-")))).toThrow(/TESTNET_PORT: "eighty" is not a number/);
  });
});

describe("config reference", () => {
  it("docs/CONFIG.md is current (npm run docs:config)", async () => {
    const { configReference } = await import("../../scripts/configReference.js");
    const { readFileSync } = await import("node:fs");
    expect(readFileSync("docs/CONFIG.md", "utf8")).toBe(configReference());
  });
});
