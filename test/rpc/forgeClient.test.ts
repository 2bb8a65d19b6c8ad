// Foundry's forge, as a user runs it (npm @foundry-rs/forge), deploying through /zgt/<key> with `forge create`
// from a fresh, unfunded account with default settings (#31). These machines have no network for forge to fetch
// a native solc, so it compiles with the npm solc package behind a solc command line (test/helpers/solcShim.mjs,
// `--use`). forge (alloy) never offers less than a 1 wei tip: on the embedded zero-fee chain the gateway
// estimates gas without the fee fields and credits that fee dust (test/rpc/castClient.test.ts says more).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { Wallet } from "ethers";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const run = promisify(execFile);
const COUNTER = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;
contract Counter {
    uint256 public number;
    constructor(uint256 start) { number = start; }
    function increment() public { number++; }
}
`;

describe("forge create against the gateway", () => {
  let gw: Gateway;
  let keyed: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    const base = gw.network("testnet").url;
    const { apiKey } = (await postJson(base + "/portal/keys", { label: "forge" })).json as { apiKey: string };
    keyed = `${base}/zgt/${apiKey}`;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("forge create --broadcast from an unfunded fresh account deploys a contract with constructor arguments; its state reads back", {
    timeout: 120_000,
  }, async () => {
    const project = mkdtempSync(join(tmpdir(), "forge-project-"));
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "src", "Counter.sol"), COUNTER);
    writeFileSync(join(project, "foundry.toml"), '[profile.default]\nsrc = "src"\nout = "out"\nevm_version = "paris"\n');
    const wallet = Wallet.createRandom();
    const key = wallet.privateKey;
    const { stdout, stderr } = await run(
      resolve("node_modules/.bin/forge"),
      [
        "create",
        "src/Counter.sol:Counter",
        "--rpc-url",
        keyed,
        "--private-key",
        key,
        "--broadcast",
        "--offline",
        "--use",
        resolve("test/helpers/solcShim.mjs"),
        "--json",
        // Last: it takes every value after it.
        "--constructor-args",
        "41",
      ],
      { cwd: project, timeout: 120_000 },
    );
    // forge prints its compiler's progress, then the deployment as JSON.
    const json = stdout.slice(stdout.indexOf("{"));
    if (!json.startsWith("{")) throw new Error(`forge printed no deployment: ${stdout} ${stderr}`);
    const deployed = JSON.parse(json) as { deployedTo: string; transactionHash: string };
    expect(deployed.deployedTo).toMatch(/^0x[0-9a-fA-F]{40}$/);
    // number() = 41, read back through the public endpoint.
    const read = await postJson(gw.network("testnet").url, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_call",
      params: [{ to: deployed.deployedTo, data: "0x8381f58a" }, "latest"],
    });
    expect(BigInt((read.json as { result: string }).result)).toBe(41n);
  });
});
