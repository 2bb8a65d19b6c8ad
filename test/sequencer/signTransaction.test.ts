// The native signer gives byte-identical transactions to ethers' own Wallet.signTransaction (both RFC 6979,
// low-s), for every shape the sequencer signs.
import { describe, expect, it } from "vitest";
import { HDNodeWallet, Mnemonic, Transaction } from "ethers";
import { nativeSigning, signTransaction } from "../../src/sequencer/signTransaction.js";

const wallet = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase("test test test test test test test test test test test junk"), "m/44'/60'/0'/0/7");

describe("signTransaction", () => {
  it("uses the native libsecp256k1 binding on this platform", () => {
    expect(nativeSigning).toBe(true);
  });

  const shapes = {
    "zero-fee legacy message": { chainId: 20180427, nonce: 5, to: "0x000000000000000000000000000000000000bEEF", data: "0x68656c6c6f", value: 0n, gasLimit: 30_000n, type: 0, gasPrice: 0n },
    "EIP-1559 contract call": { chainId: 101010, nonce: 123456, to: "0x5FbDB2315678afecb367f032d93F642f64180aa3", data: "0xa9059cbb" + "00".repeat(64), value: 7n, gasLimit: 90_000n, type: 2, maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000n },
    "contract creation": { chainId: 20180427, nonce: 0, to: null, data: "0x6080604052", value: 0n, gasLimit: 500_000n, type: 0, gasPrice: 0n },
  } as const;
  for (const [name, tx] of Object.entries(shapes)) {
    it(`${name}: identical to ethers' Wallet.signTransaction, and recovers to the wallet`, async () => {
      const ours = signTransaction(wallet, tx);
      expect(ours).toBe(await wallet.signTransaction(tx));
      expect(Transaction.from(ours).from).toBe(wallet.address);
    });
  }
});
