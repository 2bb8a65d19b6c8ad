// An EIP-191 personal message signed by a gateway wallet, wherever its key lives: r ‖ s ‖ v (27 or 28), the
// same bytes ethers' Wallet.signMessage gives for a local key.
import { concat, getBytes, hashMessage, hexlify } from "ethers";
import type { TxSigner } from "../../sequencer/txSigner.js";

export async function signMessage(signer: TxSigner, message: string): Promise<string> {
  const { signature, recid } = await signer.signDigest(getBytes(hashMessage(message)));
  return hexlify(concat([signature, Uint8Array.of(27 + recid)]));
}
