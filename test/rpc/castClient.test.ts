// Foundry's cast, as a user runs it (npm @foundry-rs/cast), with default settings, through /zgt/<key> on the
// zero-fee embedded chain (#31): reads, a transfer and a contract creation from a fresh, unfunded account.
// cast (alloy) never offers less than a 1 wei priority fee, and a node caps an estimate by balance / fee: so on
// a zero-fee network the gateway asks the node for gas without the fee fields, and on the embedded chain credits
// the tip's dust to an account that has none (never value). The faucet test covers funded accounts.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { Wallet } from "ethers";
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

  it("cast send (a call) and cast send --create (a deployment) from an unfunded fresh account, default settings", { timeout: 120_000 }, async () => {
    const wallet = Wallet.createRandom();
    const key = wallet.privateKey;
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

  it("value is never credited: a transfer of ether from an unfunded account is still refused", { timeout: 60_000 }, async () => {
    const key = Wallet.createRandom().privateKey;
    await expect(cast("send", "--rpc-url", keyed, "--private-key", key, "--value", "1ether", "0x000000000000000000000000000000000000dEaD")).rejects.toThrow(
      /insufficient funds|exceeds allowance|lack of funds/i,
    );
  });
});
