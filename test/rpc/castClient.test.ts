// Foundry's cast, as a user runs it (npm @foundry-rs/cast), with default settings, through /zgt/<key> on the
// zero-fee embedded chain (#31): reads, a transfer and a contract creation. cast (alloy) never offers less than
// a 1 wei priority fee, so unlike ethers and viem it needs an account holding a little (21,000 wei for a
// transfer): here one of anvil's dev accounts signs; an unfunded one is refused by the node.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import artifact from "../../src/platform/multicall3.artifact.json" with { type: "json" };

const run = promisify(execFile);
const cast = async (...args: string[]): Promise<string> => {
  const { stdout, stderr } = await run("node_modules/.bin/cast", args, { timeout: 60_000 });
  if (stdout.trim() === "") throw new Error(`cast ${args[0]} printed nothing: ${stderr}`);
  return stdout;
};

describe("cast against the gateway", () => {
  let gw: Gateway;
  let keyed: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    const base = gw.network("testnet").url;
    const { apiKey } = (await postJson(base + "/portal/keys", { label: "cast" })).json as { apiKey: string };
    keyed = `${base}/zgt/${apiKey}`;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("cast chain-id, gas-price and balance read through the gateway", async () => {
    expect((await cast("chain-id", "--rpc-url", keyed)).trim()).toBe("20180427");
    expect((await cast("gas-price", "--rpc-url", keyed)).trim()).toBe("0");
  });

  it("cast send (a transfer) and cast send --create (a deployment), default settings", { timeout: 120_000 }, async () => {
    // anvil's dev account 2 (the gateway's embedded chain deploys its demo contracts from 0 and 1).
    const key = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
    const sent = JSON.parse(await cast("send", "--rpc-url", keyed, "--private-key", key, "--json", "0x000000000000000000000000000000000000dEaD", "0x1234")) as {
      status: string;
    };
    expect(sent.status).toBe("0x1");
    const created = JSON.parse(await cast("send", "--rpc-url", keyed, "--private-key", key, "--json", "--create", artifact.bytecode)) as {
      status: string;
      contractAddress: string;
    };
    expect(created.status).toBe("0x1");
    expect((await cast("code", "--rpc-url", keyed, created.contractAddress)).trim()).toMatch(/^0x60/);
  });
});
