// libsecp256k1 through the `secp256k1` package's prebuilt N-API binding, when it loads: signing and public-key
// recovery several times faster than ethers' JavaScript (bench/README.md). Without it, ethers does both.
import { createRequire } from "node:module";
import { SigningKey, Signature, hexlify, getBytes } from "ethers";
import type { RecoverableSignature } from "./txSigner.js";

interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array;
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

/** RFC 6979, low-s: the same signature ethers makes. */
export function signWithKey(digest: Uint8Array, privateKey: Uint8Array): RecoverableSignature {
  if (native) return native.ecdsaSign(digest, privateKey);
  const sig = new SigningKey(privateKey).sign(digest);
  return { signature: getBytes(sig.r + sig.s.slice(2)), recid: sig.yParity };
}

/** The uncompressed public key (65 bytes, 0x04 ‖ x ‖ y) a signature over `digest` recovers to. */
export function recoverPublicKey(digest: Uint8Array, sig: RecoverableSignature): Uint8Array {
  if (native) return native.ecdsaRecover(sig.signature, sig.recid, digest, false);
  const signature = Signature.from({ r: hexlify(sig.signature.subarray(0, 32)), s: hexlify(sig.signature.subarray(32, 64)), yParity: sig.recid as 0 | 1 });
  return getBytes(SigningKey.recoverPublicKey(digest, signature));
}
