// Transaction signing for the sequencer: the transaction is RLP-encoded here (rlp.ts) and the ECDSA signature
// comes from libsecp256k1 (the `secp256k1` package's prebuilt N-API binding) when it loads. The result is
// byte-identical to ethers' Wallet.signTransaction (RFC 6979, low-s; test/sequencer/signTransaction.test.ts).
// Why not ethers: its JavaScript signer is several times slower than the native one, and building and
// serialising through its Transaction class was, after the journal, the largest cost of a ZKT write (bench/README.md).
// Without the binding, ethers builds and signs.
import { createRequire } from "node:module";
import { getAddress, getBytes, keccak256, Transaction } from "ethers";
import { keccak256Bytes } from "./keccak.js";
import type { HDNodeWallet, Wallet } from "ethers";
import type { FeeFields } from "./feeOracle.js";
import { rlpEncode, rlpInt, stripZeros, type RlpItem } from "./rlp.js";

interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

const native: NativeSecp256k1 | undefined = (() => {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as NativeSecp256k1;
  } catch {
    return undefined;
  }
})();

/** Whether signatures come from the native libsecp256k1 binding. */
export const nativeSigning = native !== undefined;

/** What the sequencer signs: a legacy (EIP-155) or EIP-1559 transaction without an access list. */
export type UnsignedTx = {
  chainId: number | bigint;
  nonce: number;
  /** null for a contract creation. */
  to: string | null;
  data: string;
  value: bigint;
  gasLimit: bigint;
} & FeeFields;

/** A gateway wallet: a key's HD-derived one, or a plain one (dev funding). */
export type SigningWallet = Wallet | HDNodeWallet;

const keyBytes = new WeakMap<SigningWallet, Uint8Array>();
const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The signed, serialised transaction (0x hex), as `wallet.signTransaction` would return it. */
export function signTransaction(wallet: SigningWallet, tx: UnsignedTx): string {
  return signedTransaction(wallet, tx).raw;
}

/** The signed transaction and its hash (hashed from the bytes, not back from hex). */
export function signedTransaction(wallet: SigningWallet, tx: UnsignedTx): { raw: string; hash: string } {
  if (!native) {
    const btx = Transaction.from(tx);
    btx.signature = wallet.signingKey.sign(btx.unsignedHash);
    return { raw: btx.serialized, hash: keccak256(btx.serialized) };
  }
  let key = keyBytes.get(wallet);
  if (!key) keyBytes.set(wallet, (key = getBytes(wallet.privateKey)));
  const [nonce, to, value, data] = commonFields(tx);
  const chainIdNumber = BigInt(tx.chainId);
  const chainId = rlpInt(chainIdNumber);
  let signed: Buffer;
  if (tx.type === 0) {
    const body: RlpItem[] = [nonce, rlpInt(tx.gasPrice), rlpInt(tx.gasLimit), to, value, data];
    const { signature, recid } = native.ecdsaSign(keccak256Bytes(rlpEncode([...body, chainId, rlpInt(0), rlpInt(0)])), key);
    // EIP-155: v carries the chain id.
    const v = rlpInt(chainIdNumber * 2n + 35n + BigInt(recid));
    signed = rlpEncode([...body, v, stripZeros(signature.subarray(0, 32)), stripZeros(signature.subarray(32, 64))]);
  } else {
    const body: RlpItem[] = [chainId, nonce, rlpInt(tx.maxPriorityFeePerGas), rlpInt(tx.maxFeePerGas), rlpInt(tx.gasLimit), to, value, data, []];
    const { signature, recid } = native.ecdsaSign(keccak256Bytes(typed(2, rlpEncode(body))), key);
    signed = typed(2, rlpEncode([...body, rlpInt(recid), stripZeros(signature.subarray(0, 32)), stripZeros(signature.subarray(32, 64))]));
  }
  return { raw: "0x" + signed.toString("hex"), hash: "0x" + Buffer.from(keccak256Bytes(signed)).toString("hex") };
}

/** nonce, to, value and data, checked as ethers would check them. */
function commonFields(tx: UnsignedTx): [Uint8Array, Uint8Array, Uint8Array, Uint8Array] {
  if (!HEX_DATA.test(tx.data)) throw new TypeError(`invalid transaction data: ${tx.data.slice(0, 20)}…`);
  let to = new Uint8Array(0);
  if (tx.to !== null) {
    if (!ADDRESS.test(tx.to)) throw new TypeError(`invalid address: ${tx.to}`);
    // Mixed case must carry a valid checksum (getAddress throws otherwise), as ethers requires.
    if (/[a-f]/.test(tx.to.slice(2)) && /[A-F]/.test(tx.to)) getAddress(tx.to);
    to = Buffer.from(tx.to.slice(2), "hex");
  }
  return [rlpInt(tx.nonce), to, rlpInt(tx.value), Buffer.from(tx.data.slice(2), "hex")];
}

function typed(type: number, payload: Buffer): Buffer {
  return Buffer.concat([Uint8Array.of(type), payload]);
}
