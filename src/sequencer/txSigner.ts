// What the sequencer signs with: an address and a signature over a 32-byte digest. The local seed's wallets
// answer at once (libsecp256k1 in this process); a hardware token answers later, off the event loop.
import type { MaybePromise } from "../maybePromise.js";

/** An ECDSA secp256k1 signature: r ‖ s (64 bytes, s in the lower half) and the recovery id (0 or 1). */
export interface RecoverableSignature {
  signature: Uint8Array;
  recid: number;
}

export interface TxSigner {
  /** The 0x address (checksummed) the signatures recover to. */
  readonly address: string;
  signDigest(digest: Uint8Array): MaybePromise<RecoverableSignature>;
}

export function isTxSigner(w: object): w is TxSigner {
  return "signDigest" in w;
}
