// Locally priced message gas against the real node (anvil's latest fork, EIP-7623 floor in force): the chain
// charges exactly the computed gas, for calldata of every byte mix; and it is used only for the zero address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HDNodeWallet, JsonRpcProvider, Mnemonic, hexlify, randomBytes, toUtf8Bytes, ZeroAddress } from "ethers";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import { intrinsicGas, localGasLimit } from "../../src/sequencer/intrinsicGas.js";

const DEV = "test test test test test test test test test test test junk";

describe("intrinsic gas of a message", () => {
  let node: EmbeddedNode;
  let provider: JsonRpcProvider;
  const wallet = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(DEV), "m/44'/60'/0'/0/7");
  let nonce = 0;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 50 });
    nonce = await provider.getTransactionCount(wallet.address, "pending");
  });
  afterAll(async () => {
    provider?.destroy();
    await node?.stop();
  });

  const send = async (data: string, gasLimit: bigint): Promise<string> =>
    (await provider.send("eth_sendRawTransaction", [
      await wallet.signTransaction({ to: ZeroAddress, data, gasLimit, gasPrice: 0n, nonce, chainId: 20180427n }),
    ])) as string;

  const payloads: [string, string][] = [
    ["ASCII text", hexlify(toUtf8Bytes("hello, chain"))],
    ["multi-byte UTF-8", hexlify(toUtf8Bytes("grüße ✓ 🚀"))],
    ["all zero bytes", "0x" + "00".repeat(64)],
    ["mixed zero and other bytes", "0x00ff00ff0000abcd"],
    ["32 KB of random bytes", hexlify(randomBytes(32 * 1024))],
  ];
  for (const [name, data] of payloads) {
    it(`${name}: mined with the computed gas as its limit, using all of it`, async () => {
      const gas = intrinsicGas(data);
      const receipt = await provider.waitForTransaction(await send(data, gas), 1, 20_000);
      nonce++;
      expect(receipt?.status).toBe(1);
      expect(receipt?.gasUsed).toBe(gas);
    });
  }

  it("is used only for the zero address and calldata up to 32 KB", () => {
    expect(localGasLimit(ZeroAddress, "0x01")).toBe(intrinsicGas("0x01"));
    expect(localGasLimit("0x000000000000000000000000000000000000bEEF", "0x01")).toBeUndefined();
    expect(localGasLimit(null, "0x01")).toBeUndefined();
    expect(localGasLimit(ZeroAddress, "0x" + "ab".repeat(32 * 1024 + 1))).toBeUndefined();
  });
});
