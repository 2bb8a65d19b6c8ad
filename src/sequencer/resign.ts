// A journaled transaction signed again by its gateway wallet: with higher fees at the same nonce (a fee bump or
// re-pricing), or with the same fees at another nonce (the node spent the old one). Pure: bytes in, bytes out.
import { Transaction } from "ethers";
import type { FeeFields } from "./feeOracle.js";
import type { MaybePromise } from "../maybePromise.js";
import { signTransaction, type SigningWallet } from "./signTransaction.js";

function fieldsOf(chainId: number, old: Transaction, nonce: number) {
  return { chainId, nonce, to: old.to, data: old.data, value: old.value, gasLimit: old.gasLimit };
}

/** The same transaction and fees at another nonce. */
export function resignAtNonce(wallet: SigningWallet, chainId: number, oldRaw: string, nonce: number): MaybePromise<string> {
  const old = Transaction.from(oldRaw);
  const base = fieldsOf(chainId, old, nonce);
  if (old.type === 0) return signTransaction(wallet, { ...base, type: 0, gasPrice: old.gasPrice ?? 0n });
  return signTransaction(wallet, { ...base, type: 2, maxFeePerGas: old.maxFeePerGas ?? 0n, maxPriorityFeePerGas: old.maxPriorityFeePerGas ?? 0n });
}

/** The same transaction at the same nonce, with fees raised to at least +12.5 % (nodes require ≥ 10 %) and at least `current`. */
export function resignWithHigherFees(wallet: SigningWallet, chainId: number, oldRaw: string, current: FeeFields): MaybePromise<string> {
  const old = Transaction.from(oldRaw);
  return signTransaction(wallet, { ...fieldsOf(chainId, old, old.nonce), ...feesToReplace(old, current) });
}

/**
 * A no-op self-transfer taking the place of a journaled transaction at its nonce (an operator's cancel): on a
 * fee network its fees are the replacement's (above the old one's); on a zero-fee network, the current ones.
 */
export function noopInPlaceOf(wallet: SigningWallet, chainId: number, oldRaw: string, current: FeeFields, zeroFees: boolean): MaybePromise<string> {
  const old = Transaction.from(oldRaw);
  const fees = zeroFees ? current : feesToReplace(old, current);
  return signTransaction(wallet, { chainId, nonce: old.nonce, to: wallet.address, data: "0x", value: 0n, gasLimit: 21_000n, ...fees });
}

/** Fees at least +12.5 % over `old`'s (nodes require ≥ 10 % to replace) and at least `current`. */
function feesToReplace(old: Transaction, current: FeeFields): FeeFields {
  const bump = (x: bigint): bigint => (x * 1125n) / 1000n + 1n;
  if (current.type === 0) return { type: 0, gasPrice: highest(bump(old.gasPrice ?? 0n), current.gasPrice) };
  const maxPriorityFeePerGas = highest(bump(old.maxPriorityFeePerGas ?? 0n), current.maxPriorityFeePerGas);
  return { type: 2, maxFeePerGas: highest(bump(old.maxFeePerGas ?? 0n), current.maxFeePerGas, maxPriorityFeePerGas), maxPriorityFeePerGas };
}

function highest(...xs: bigint[]): bigint {
  // biome-ignore lint/complexity/useMathMinMax: Math.max takes no bigint
  return xs.reduce((a, b) => (a > b ? a : b));
}
