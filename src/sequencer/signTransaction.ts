// Transaction signing for the sequencer: the transaction is RLP-encoded here (rlp.ts) and its digest signed by
// a TxSigner: a local key through libsecp256k1 (secp256k1.ts), byte-identical to ethers'
// Wallet.signTransaction (RFC 6979, low-s; test/sequencer/signTransaction.test.ts), or a hardware token's key.
// Not ethers' Transaction class: building and serialising through it cost more than the signature
// (bench/README.md).
import { getAddress, getBytes } from "ethers";
import { keccak256Bytes } from "./keccak.js";
import type { HDNodeWallet, Wallet } from "ethers";
import type { FeeFields } from "./feeOracle.js";
import { andThen, type MaybePromise } from "../maybePromise.js";
import { rlpEncode, rlpInt, stripZeros, type RlpItem } from "./rlp.js";
import { signWithKey } from "./secp256k1.js";
import { isTxSigner, type RecoverableSignature, type TxSigner } from "./txSigner.js";

export { nativeSigning } from "./secp256k1.js";

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

/** A gateway wallet: a signer (the seed's, a token's), or an ethers wallet (tests, dev funding). */
export type SigningWallet = TxSigner | Wallet | HDNodeWallet;

const localSigners = new WeakMap<Wallet | HDNodeWallet, TxSigner>();
const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** An ethers wallet as a signer of its own key, made once per wallet. */
export function localSigner(wallet: Wallet | HDNodeWallet): TxSigner {
  let signer = localSigners.get(wallet);
  if (!signer) {
    const key = getBytes(wallet.privateKey);
    signer = { address: wallet.address, signDigest: (digest) => signWithKey(digest, key) };
    localSigners.set(wallet, signer);
  }
  return signer;
}

/** The signed, serialised transaction (0x hex), as `wallet.signTransaction` would return it. */
export function signTransaction(wallet: Wallet | HDNodeWallet, tx: UnsignedTx): string;
export function signTransaction(wallet: SigningWallet, tx: UnsignedTx): MaybePromise<string>;
export function signTransaction(wallet: SigningWallet, tx: UnsignedTx): MaybePromise<string> {
  return andThen(signedTransaction(wallet, tx), (t) => t.raw);
}

/**
 * The signed transaction and its hash (hashed from the bytes, not back from hex): at once with a local key,
 * once the signer answers otherwise.
 */
export function signedTransaction(wallet: Wallet | HDNodeWallet, tx: UnsignedTx): { raw: string; hash: string };
export function signedTransaction(wallet: SigningWallet, tx: UnsignedTx): MaybePromise<{ raw: string; hash: string }>;
export function signedTransaction(wallet: SigningWallet, tx: UnsignedTx): MaybePromise<{ raw: string; hash: string }> {
  const signer = isTxSigner(wallet) ? wallet : localSigner(wallet);
  const [nonce, to, value, data] = commonFields(tx);
  const chainIdNumber = BigInt(tx.chainId);
  const chainId = rlpInt(chainIdNumber);
  if (tx.type === 0) {
    const body: RlpItem[] = [nonce, rlpInt(tx.gasPrice), rlpInt(tx.gasLimit), to, value, data];
    return andThen(signer.signDigest(keccak256Bytes(rlpEncode([...body, chainId, rlpInt(0), rlpInt(0)]))), ({ signature, recid }) =>
      // EIP-155: v carries the chain id.
      finished(rlpEncode([...body, rlpInt(chainIdNumber * 2n + 35n + BigInt(recid)), ...rs(signature)])),
    );
  }
  const body: RlpItem[] = [chainId, nonce, rlpInt(tx.maxPriorityFeePerGas), rlpInt(tx.maxFeePerGas), rlpInt(tx.gasLimit), to, value, data, []];
  return andThen(signer.signDigest(keccak256Bytes(typed(2, rlpEncode(body)))), ({ signature, recid }: RecoverableSignature) =>
    finished(typed(2, rlpEncode([...body, rlpInt(recid), ...rs(signature)]))),
  );
}

const rs = (signature: Uint8Array): [Uint8Array, Uint8Array] => [stripZeros(signature.subarray(0, 32)), stripZeros(signature.subarray(32, 64))];
const finished = (signed: Buffer): { raw: string; hash: string } => ({
  raw: "0x" + signed.toString("hex"),
  hash: "0x" + Buffer.from(keccak256Bytes(signed)).toString("hex"),
});

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
