// Where the gateway's wallets live (config `signer`): derived from the master seed in memory (the embedded
// default), or generated inside a PKCS#11 token that never lets their private keys out. Every wallet is an
// index: 0 the public try-it-out signer, 1, 2, … the API keys' own.
import type { MaybePromise } from "../../maybePromise.js";
import type { TxSigner } from "../../sequencer/txSigner.js";

export interface Wallets {
  /** Wallet n's signer; n must have been made ready in this process (ready()). */
  signer(index: number): TxSigner;
  /** Makes wallet n usable through signer(n): found where it is kept, or made there on its first use. */
  ready(index: number): MaybePromise<void>;
  /** The wallet with this address among `indexes` and the public signer's (recovery of journaled writes). */
  byAddress(address: string, indexes: () => Promise<number[]>): Promise<TxSigner | undefined>;
  /** A secret of the custody's own that API keys' callback secrets derive from (never shown). */
  readonly callbackRoot: string;
  close(): void;
}

export const PUBLIC_SIGNER_INDEX = 0;
