// Wallets derived from the master seed (BIP-32), signed in this process: the embedded default.
import { localSigner } from "../../sequencer/signTransaction.js";
import type { TxSigner } from "../../sequencer/txSigner.js";
import type { MasterSeed } from "../masterSeed.js";
import { PUBLIC_SIGNER_INDEX, type Wallets } from "./wallets.js";

export function seedWallets(seed: MasterSeed): Wallets {
  const signer = (index: number): TxSigner => localSigner(seed.wallet(index));
  return {
    signer,
    ready: () => undefined,
    async byAddress(address, indexes) {
      for (const index of [PUBLIC_SIGNER_INDEX, ...(await indexes())]) if (seed.wallet(index).address === address) return signer(index);
      return undefined;
    },
    callbackRoot: seed.wallet(PUBLIC_SIGNER_INDEX).privateKey,
    close: () => undefined,
  };
}
