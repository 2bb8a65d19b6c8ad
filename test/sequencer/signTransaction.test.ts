// The native signer gives byte-identical transactions to ethers' own Wallet.signTransaction (both RFC 6979,
// low-s), for every shape the sequencer signs.
import { describe, expect, it } from "vitest";
import { getAddress, HDNodeWallet, keccak256, Mnemonic, Transaction } from "ethers";
import { nativeSigning, signTransaction, signedTransaction, type UnsignedTx } from "../../src/sequencer/signTransaction.js";

const wallet = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase("test test test test test test test test test test test junk"), "m/44'/60'/0'/0/7");

describe("signTransaction", () => {
  it("uses the native libsecp256k1 binding on this platform", () => {
    expect(nativeSigning).toBe(true);
  });

  const shapes = {
    "zero-fee legacy message": {
      chainId: 20180427,
      nonce: 5,
      to: "0x000000000000000000000000000000000000bEEF",
      data: "0x68656c6c6f",
      value: 0n,
      gasLimit: 30_000n,
      type: 0,
      gasPrice: 0n,
    },
    "EIP-1559 contract call": {
      chainId: 101010,
      nonce: 123456,
      to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      data: "0xa9059cbb" + "00".repeat(64),
      value: 7n,
      gasLimit: 90_000n,
      type: 2,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000n,
    },
    "contract creation": { chainId: 20180427, nonce: 0, to: null, data: "0x6080604052", value: 0n, gasLimit: 500_000n, type: 0, gasPrice: 0n },
  } as const;
  for (const [name, tx] of Object.entries(shapes)) {
    it(`${name}: identical to ethers' Wallet.signTransaction, and recovers to the wallet`, async () => {
      const ours = signTransaction(wallet, tx);
      expect(ours).toBe(await wallet.signTransaction(tx));
      expect(Transaction.from(ours).from).toBe(wallet.address);
    });
  }

  it("500 random transactions of both types (RLP edge cases included): identical to ethers'", async () => {
    // Deterministic pseudo-random values around RLP's boundaries: 0, single bytes < 0x80, 55/56-byte strings, long data.
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const big = (): bigint => [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 2n ** 64n - 1n, BigInt(rand(2 ** 30)) * 1_000_000_007n][rand(8)]!;
    const data = (): string => "0x" + randomBytes([0, 1, 1, 54, 55, 56, 57, 300, 70_000][rand(9)]!, rand(3) === 0).toString("hex");
    for (let i = 0; i < 500; i++) {
      const base = {
        chainId: [1, 20180427, 101010, 2 ** 40][rand(4)]!,
        nonce: [0, 1, 127, 128, 2 ** 32 + 5][rand(5)]!,
        to: rand(5) === 0 ? null : randomAddress(rand(3)),
        data: data(),
        value: big(),
        gasLimit: big(),
      };
      const tx: UnsignedTx = rand(2) === 0 ? { ...base, type: 0, gasPrice: big() } : { ...base, type: 2, maxFeePerGas: big(), maxPriorityFeePerGas: big() };
      const { raw, hash } = signedTransaction(wallet, tx);
      expect(raw, `case ${i}`).toBe(await wallet.signTransaction(tx));
      expect(hash, `case ${i}`).toBe(keccak256(raw));
    }
  });

  it("refuses bad input as ethers does: a wrong checksum, malformed data", () => {
    const tx: UnsignedTx = {
      chainId: 1,
      nonce: 0,
      to: "0x5FbDB2315678afecb367f032d93F642f64180aA3",
      data: "0x",
      value: 0n,
      gasLimit: 21_000n,
      type: 0,
      gasPrice: 0n,
    };
    expect(() => signTransaction(wallet, tx)).toThrow(/checksum|address/i);
    expect(() => signTransaction(wallet, { ...tx, to: null, data: "0x123" })).toThrow(/data/);
    expect(() => signTransaction(wallet, { ...tx, to: null, data: "0xzz" })).toThrow(/data/);
  });
});

/** Bytes from the test's own generator (zeros when asked: RLP strips nothing inside strings). */
function randomBytes(n: number, zeros: boolean): Buffer {
  const b = Buffer.alloc(n);
  if (!zeros) for (let i = 0; i < n; i++) b[i] = (i * 131 + n * 7 + 1) % 256;
  return b;
}

/** A valid address in lower case, checksummed mixed case, or upper case. */
function randomAddress(style: number): string {
  const hex = randomBytes(20, false).toString("hex");
  if (style === 0) return "0x" + hex;
  if (style === 1) return getAddress("0x" + hex);
  return "0x" + hex.toUpperCase();
}
