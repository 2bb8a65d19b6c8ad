// Fee networks: a transaction priced below the base fee stays unmined; the sequencer replaces it at the same
// nonce with bounded higher fees, and the submission completes under the new hash.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Wallet } from "ethers";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("stuck transactions on a market-fee chain", () => {
  let node: EmbeddedNode;
  let gw: Gateway;
  let provider: JsonRpcProvider;
  const mnemonic = Wallet.createRandom().mnemonic!.phrase;
  const signer = Wallet.fromPhrase(mnemonic).address;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "market" });
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 100 });
    await provider.send("anvil_setBalance", [signer, "0x" + (10n ** 22n).toString(16)]);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [node.url];
        c.networks[0]!.feeMode = "market";
        c.masterMnemonic = mnemonic;
        c.stuckTransactionMs = 1_000;
      },
    });
  });
  afterAll(async () => {
    provider?.destroy();
    await gw?.close();
    await node?.stop();
  });

  async function statusOf(queueId: string, until: string): Promise<{ status: string; transactionHash: string }> {
    let status: { status: string; transactionHash: string } | undefined;
    for (let i = 0; i < 400 && status?.status !== until; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await (await fetch(`${gw.network("testnet").url}/zkt/transactions/${queueId}`)).json()) as typeof status;
    }
    return status!;
  }

  it("refused by the node for its fees: re-priced at the same nonce and completes", async () => {
    const url = gw.network("testnet").url + "/zkt/try-it-out";
    const highBaseFee = 50n * 10n ** 9n;
    // The scenario needs the write signed with fees cached from before the base fee jumps; on a loaded machine
    // the second can expire first (the gateway then prices it right and it mines as signed): try again.
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) {
        // Back to a low base fee (the last attempt's jump stays for many blocks otherwise), mined before the warm-up.
        await provider.send("anvil_setNextBlockBaseFeePerGas", ["0x" + (10n ** 9n).toString(16)]);
        while (((await provider.getBlock("latest"))?.baseFeePerGas ?? highBaseFee) >= highBaseFee) await new Promise((r) => setTimeout(r, 100));
        await new Promise((r) => setTimeout(r, 1_100)); // and the fees cached at the last attempt's price expired
      }
      const warm = await postJson(url, { arguments: "warms the fee cache" }); // fees are now cached for ~1 s
      expect(warm.status).toBe(200);
      // The next block's base fee jumps far above what the cached fees pay.
      await provider.send("anvil_setNextBlockBaseFeePerGas", ["0x" + highBaseFee.toString(16)]);
      const res = await postJson(url, { arguments: `underpriced ${attempt}` });
      expect(res.status).toBe(200);
      const { hash, queueId } = res.json as { hash: string; queueId: string };
      const status = await statusOf(queueId, "completed");
      expect(status.status).toBe("completed");
      if (status.transactionHash === hash && attempt < 3) {
        const signed = await provider.getTransaction(hash);
        expect(signed!.maxFeePerGas! >= highBaseFee, "an underpriced write mined as signed").toBe(true);
        continue; // priced after the jump: not the case under test
      }
      expect(status.transactionHash).not.toBe(hash);
      expect((await provider.getTransactionReceipt(status.transactionHash))?.status).toBe(1);
      expect(await provider.getTransactionReceipt(hash)).toBeNull();
      return;
    }
  });

  it("accepted but left unmined: replaced with bounded higher fees, and the replacement mines", async () => {
    const url = gw.network("testnet").url + "/zkt/try-it-out";
    await provider.send("evm_setIntervalMining", [0]); // the node stops producing blocks
    const res = await postJson(url, { arguments: "stuck in the pool" });
    expect(res.status).toBe(200);
    const { hash, queueId } = res.json as { hash: string; queueId: string };
    // Answered once journaled; the broadcast follows (on a loaded machine, after this line's first look).
    await expect.poll(() => provider.getTransaction(hash), { timeout: 10_000 }).not.toBeNull();
    const original = await provider.getTransaction(hash);
    // Wait for the sequencer to notice (stuckTransactionMs = 1 s) and replace it.
    let replacedHash = hash;
    for (let i = 0; i < 300 && replacedHash === hash; i++) {
      await new Promise((r) => setTimeout(r, 100));
      replacedHash = ((await (await fetch(`${gw.network("testnet").url}/zkt/transactions/${queueId}`)).json()) as { transactionHash: string }).transactionHash;
    }
    expect(replacedHash).not.toBe(hash);
    await provider.send("evm_setIntervalMining", [1]);
    const status = await statusOf(queueId, "completed");
    expect(status.status).toBe("completed");
    const mined = await provider.getTransaction(status.transactionHash);
    expect(mined!.nonce).toBe(original!.nonce);
    expect(mined!.maxFeePerGas! > original!.maxFeePerGas!).toBe(true);
    expect(await provider.getTransactionReceipt(hash)).toBeNull();
  });
});
