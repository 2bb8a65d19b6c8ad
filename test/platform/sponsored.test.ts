// Supported tokens on the dev chain, and sponsored transactions end to end: an unfunded sender's transaction
// lands on a zero-fee and on a market-fee network, sponsored by the key's wallet; every bad input is refused
// with nothing broadcast.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Wallet, keccak256, type HDNodeWallet } from "ethers";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const rpc = (method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id: 1, method, params });
type RpcAnswer = { result?: unknown; error?: { code: number; message: string } };

describe("platform_getSupportedTokens", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.networks[0]!.supportedTokens = ["0x000000000000000000000000000000000000dEaD"]) });
  });
  afterAll(() => gw?.close());

  it("lists the configured tokens and, on the dev chain, a real deployed demo token", async () => {
    const url = gw.network("testnet").url;
    const res = (await postJson(url, rpc("platform_getSupportedTokens", []))).json as { result: { code: number; value: string[] } };
    expect(res.result.code).toBe(200);
    expect(res.result.value).toHaveLength(2);
    const demo = res.result.value[1]!;
    const code = ((await postJson(url, rpc("eth_getCode", [demo, "latest"]))).json as { result: string }).result;
    expect(code.length).toBeGreaterThan(2);
    const name = await postJson(url + "/zkt/try-it-out", { to: demo, abi: ["function name() view returns (string)"], method: "name", arguments: [] });
    expect((name.json as { output: string[] }).output).toEqual(["Gateway Demo Token"]);
  });
});

for (const feeMode of ["zero", "market"] as const) {
  describe(`platform_sendSponsoredTransaction (${feeMode} fees)`, () => {
    let gw: Gateway;
    let url: string;
    let node: JsonRpcProvider;
    let key: { apiKey: string; wallet: string };
    let other: { apiKey: string; wallet: string };
    const chainId = 20180427n;

    beforeAll(async () => {
      gw = await startTestGateway({ mutate: (c) => (c.networks[0]!.feeMode = feeMode) });
      url = gw.network("testnet").url;
      node = new JsonRpcProvider(gw.network("testnet").upstreamUrls[0], undefined, { staticNetwork: true, pollingInterval: 100 });
      const issue = async () => {
        const { apiKey, info } = await gw.keys.create({});
        return { apiKey, wallet: info.walletAddress };
      };
      key = await issue();
      other = await issue();
    });
    afterAll(async () => {
      node?.destroy();
      await gw?.close();
    });

    async function signedBy(sender: Wallet | HDNodeWallet, overrides: Record<string, unknown> = {}): Promise<string> {
      const fees = feeMode === "zero" ? { type: 0, gasPrice: 0n } : { type: 2, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n };
      return sender.signTransaction({
        to: "0x000000000000000000000000000000000000bEEF",
        value: 0n,
        gasLimit: 21_000n,
        nonce: 0,
        chainId,
        ...fees,
        ...overrides,
      });
    }
    const consent = async (apiKey: string, raw: string) =>
      (await postJson(`${url}/zgt/${apiKey}/sponsor-consent`, { rawTransaction: raw })).json as { sponsorAddress: string; signature: string; message: string };
    const send = async (apiKey: string, params: unknown[]) =>
      (await postJson(`${url}/zgt/${apiKey}`, rpc("platform_sendSponsoredTransaction", params))).json as RpcAnswer;

    it("an unfunded sender's transaction lands; the sender spends nothing of its own", async () => {
      const sender = Wallet.createRandom();
      expect(await node.getBalance(sender.address)).toBe(0n);
      if (feeMode === "market") expect((await node.getBlock("latest"))!.baseFeePerGas! > 0n).toBe(true);
      const raw = await signedBy(sender);
      const c = await consent(key.apiKey, raw);
      expect(c.sponsorAddress).toBe(key.wallet);
      expect(c.message).toBe(`I consent to be a sponsor of transaction: ${keccak256(raw)}`);
      const res = await send(key.apiKey, [raw, c.sponsorAddress, c.signature]);
      expect(res.error).toBeUndefined();
      expect(res.result).toBe(keccak256(raw));
      const receipt = await node.waitForTransaction(res.result as string, 1, 15_000);
      expect(receipt?.status).toBe(1);
      expect(receipt?.from).toBe(sender.address);
      // Whatever the sender holds now came from the sponsor; it had nothing to spend.
      const after = await node.getBalance(sender.address);
      if (feeMode === "zero") expect(after).toBe(0n);
      else expect(after).toBe(21_000n * 10n ** 10n - receipt!.gasUsed * receipt!.gasPrice);
    });

    it("through the generated gRPC client as well", async () => {
      const client = createClient(RpcService, createGrpcTransport({ baseUrl: url }));
      const headers = { authorization: `Bearer ${key.apiKey}` };
      const raw = await signedBy(Wallet.createRandom());
      const c = await client.signSponsorConsent({ rawTransaction: raw }, { headers });
      const res = await client.sendSponsoredTransaction({ rawTransaction: raw, sponsorAddress: c.sponsorAddress, sponsorSignature: c.signature }, { headers });
      expect((await node.waitForTransaction(res.transactionHash, 1, 15_000))?.status).toBe(1);
    });

    it("every bad input is refused with a specific error and nothing broadcast", async () => {
      const sender = Wallet.createRandom();
      const sponsorNonce = await node.getTransactionCount(key.wallet, "pending");
      const raw = await signedBy(sender);
      const good = await consent(key.apiKey, raw);
      const foreign = await consent(other.apiKey, raw);
      const wrongChain = await signedBy(sender, { chainId: 1n });
      const cases: [string, string, unknown[], number, RegExp][] = [
        ["malformed raw tx", key.apiKey, ["0xdeadbeef", good.sponsorAddress, good.signature], -32602, /not a well-formed transaction/],
        ["wrong chain id", key.apiKey, [wrongChain, good.sponsorAddress, good.signature], -32602, /chain id 1; this network is 20180427/],
        ["bad consent signature", key.apiKey, [raw, good.sponsorAddress, foreign.signature], -32602, /not the sponsor's consent/],
        [
          "consent for another transaction",
          key.apiKey,
          [await signedBy(sender, { nonce: 5 }), good.sponsorAddress, good.signature],
          -32602,
          /not the sponsor's consent/,
        ],
        ["sponsor not yours", key.apiKey, [raw, foreign.sponsorAddress, foreign.signature], -32003, /not a wallet this gateway holds for your API key/],
        ["wrong number of params", key.apiKey, [raw], -32602, /takes \[rawSignedTx, sponsorAddress, sponsorSignature\]/],
      ];
      for (const [name, apiKey, params, code, message] of cases) {
        const res = await send(apiKey, params);
        expect(res.error?.code, name).toBe(code);
        expect(res.error?.message, name).toMatch(message);
      }
      const pub = (await postJson(url, rpc("platform_sendSponsoredTransaction", [raw, good.sponsorAddress, good.signature]))).json as RpcAnswer;
      expect(pub.error?.code).toBe(-32003);
      expect(pub.error?.message).toMatch(/needs an API key/);
      if (feeMode === "market") {
        await node.send("anvil_setBalance", [sender.address, "0x" + (10n ** 20n).toString(16)]);
        const funded = await send(key.apiKey, [raw, good.sponsorAddress, good.signature]);
        expect(funded.error?.message).toMatch(/already funded/);
      }
      await new Promise((r) => setTimeout(r, 600));
      expect(await node.getTransactionCount(sender.address, "pending")).toBe(0);
      expect(await node.getTransactionCount(key.wallet, "pending")).toBe(sponsorNonce);
    });
  });
}
