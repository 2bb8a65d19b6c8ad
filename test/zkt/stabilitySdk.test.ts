// Ethers and viem clients made the way Stability's SDK makes them (#34; the shapes written here, not its
// code): the testnet provider on the base URL with the chain id (ethers) or no chain (viem), and the keyed
// main-network provider on `<base URL>/<API_KEY>` — the key appended to the base URL, not under /zgt/.
import { JsonRpcProvider, Wallet } from "ethers";
import { createPublicClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("the SDK's providers, by their shapes", () => {
  let gw: Gateway;
  let testnet: string;
  let mainnet: string;
  let apiKey: string;
  beforeAll(async () => {
    gw = await startTestGateway({ networks: ["testnet", "mainnet"] });
    testnet = gw.network("testnet").url;
    mainnet = gw.network("mainnet").url;
    apiKey = ((await postJson(mainnet + "/portal/keys", { label: "sdk" })).json as { apiKey: string }).apiKey;
  });
  afterAll(async () => {
    await gw?.close();
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the name quotes the client code the test runs
  it("ethers: new JsonRpcProvider(base, 20180427) and new JsonRpcProvider(`${base}/${apiKey}`, 101010)", async () => {
    const open = new JsonRpcProvider(testnet, 20180427);
    expect((await open.getNetwork()).chainId).toBe(20180427n);
    expect(await open.getBlockNumber()).toBeGreaterThanOrEqual(0);
    const keyed = new JsonRpcProvider(`${mainnet}/${apiKey}`, 101010);
    expect((await keyed.getNetwork()).chainId).toBe(101010n);
    // The keyed URL carries the key's rights: a write goes through (zero fees: an unfunded wallet sends).
    const tx = await Wallet.createRandom(keyed).sendTransaction({ to: "0x000000000000000000000000000000000000dEaD", data: "0x" });
    expect((await tx.wait(1, 20_000))?.status).toBe(1);
    open.destroy();
    keyed.destroy();
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the name quotes the client code the test runs
  it("viem: createPublicClient({ transport: http(base) }) and http(`${base}/${apiKey}`)", async () => {
    expect(await createPublicClient({ transport: http(testnet) }).getChainId()).toBe(20180427);
    const keyed = createPublicClient({ transport: http(`${mainnet}/${apiKey}`) });
    expect(await keyed.getChainId()).toBe(101010);
    expect(await keyed.getBlockNumber()).toBeGreaterThanOrEqual(0n);
  });
});
