// On a zero-fee network a standard client, with its default settings and an unfunded fresh account, sends a
// transaction (#31): every fee answer it prices from leads it to 0 (anvil suggested a 1 gwei tip, so ethers,
// viem and cast asked for gas money the account did not have).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Wallet } from "ethers";
import { createPublicClient, createWalletClient, defineChain, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("zero-fee network, default client settings, unfunded account", () => {
  let gw: Gateway;
  let keyed: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    const base = gw.network("testnet").url;
    const { apiKey } = (await postJson(base + "/portal/keys", { label: "fees" })).json as { apiKey: string };
    keyed = `${base}/zgt/${apiKey}`;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("every fee answer is 0: eth_gasPrice, eth_maxPriorityFeePerGas, eth_feeHistory, the block's base fee", async () => {
    const provider = new JsonRpcProvider(gw.network("testnet").url, undefined, { staticNetwork: true });
    expect(await provider.send("eth_gasPrice", [])).toBe("0x0");
    expect(await provider.send("eth_maxPriorityFeePerGas", [])).toBe("0x0");
    const history = (await provider.send("eth_feeHistory", ["0x4", "latest", [50]])) as { baseFeePerGas: string[]; reward?: string[][] };
    expect(history.baseFeePerGas.every((f) => BigInt(f) === 0n)).toBe(true);
    expect((history.reward ?? []).flat().every((r) => BigInt(r) === 0n)).toBe(true);
    expect((await provider.getBlock("latest"))!.baseFeePerGas).toBe(0n);
    const fees = await provider.getFeeData();
    // ethers reads a zero base fee as "no EIP-1559" (a truthiness test) and prices legacy at gasPrice: 0 either way.
    expect([fees.gasPrice, fees.maxFeePerGas ?? 0n, fees.maxPriorityFeePerGas ?? 0n]).toEqual([0n, 0n, 0n]);
    provider.destroy();
  });

  it("ethers v6: sendTransaction and wait() from a fresh, unfunded wallet", async () => {
    const provider = new JsonRpcProvider(keyed, undefined, { staticNetwork: true, pollingInterval: 100 });
    const wallet = Wallet.createRandom().connect(provider);
    expect(await provider.getBalance(wallet.address)).toBe(0n);
    const tx = await wallet.sendTransaction({ to: "0x000000000000000000000000000000000000dEaD", data: "0x1234" });
    const receipt = await tx.wait(1, 20_000);
    expect(receipt?.status).toBe(1);
    provider.destroy();
  });

  it("viem: sendTransaction and waitForTransactionReceipt from a fresh, unfunded account", async () => {
    const chain = defineChain({
      id: 20180427,
      name: "testnet",
      nativeCurrency: { name: "Free", symbol: "FREE", decimals: 18 },
      rpcUrls: { default: { http: [keyed] } },
    });
    const account = privateKeyToAccount(generatePrivateKey());
    const wallet = createWalletClient({ account, chain, transport: http(keyed) });
    const reader = createPublicClient({ chain, transport: http(keyed), pollingInterval: 100 });
    const hash = await wallet.sendTransaction({ to: "0x000000000000000000000000000000000000dEaD", data: "0x1234" });
    const receipt = await reader.waitForTransactionReceipt({ hash, timeout: 20_000 });
    expect(receipt.status).toBe("success");
  });
});

describe("Multicall3 on the embedded chain", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  // Stability's SDK and viem tutorial use Stability's own address (@stabilityprotocol/config) (#55 item 9).
  it.each([
    ["its canonical address", "0xcA11bde05977b3631167028862bE2a173976CA11"],
    ["Stability's test network address", "0x3ed62137c5DB927cb137c26455969116BF0c23Cb"],
  ] as const)("viem's multicall works unchanged (Multicall3 at %s)", async (_, multicall3) => {
    const url = gw.network("testnet").url;
    const chain = defineChain({
      id: 20180427,
      name: "testnet",
      nativeCurrency: { name: "Free", symbol: "FREE", decimals: 18 },
      rpcUrls: { default: { http: [url] } },
      contracts: { multicall3: { address: multicall3 } },
    });
    const client = createPublicClient({ chain, transport: http(url) });
    const tokens = ((await postJson(url, { jsonrpc: "2.0", id: 1, method: "platform_getSupportedTokens", params: [] })).json as { result: { value: string[] } })
      .result.value;
    const erc20 = [
      { type: "function", name: "symbol", inputs: [], outputs: [{ type: "string" }], stateMutability: "view" },
      { type: "function", name: "totalSupply", inputs: [], outputs: [{ type: "uint256" }], stateMutability: "view" },
    ] as const;
    const token = tokens[0] as `0x${string}`;
    const results = await client.multicall({
      contracts: [
        { address: token, abi: erc20, functionName: "symbol" },
        { address: token, abi: erc20, functionName: "totalSupply" },
      ],
    });
    expect(results.map((r) => r.status)).toEqual(["success", "success"]);
    expect(typeof results[0]!.result).toBe("string");
    expect(results[1]!.result).toBeGreaterThan(0n);
  });
});
