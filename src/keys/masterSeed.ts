// The gateway's master seed: every gateway-held wallet derives from it (BIP-32 m/44'/60'/0'/0/<n>).
// From MASTER_MNEMONIC, else <dataDir>/master-seed (created on first start, mode 0600; sealed under a key kept
// elsewhere with config signer.sealSeed). Never logged.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HDNodeWallet, Mnemonic, Wallet } from "ethers";
import { LRUCache } from "lru-cache";
import { isSealed, type Sealer, seal, sealedBy, unseal } from "./sealedSeed.js";

/** Derived wallets kept; past that the least recently used is dropped (a public service issues keys to anyone). */
const CACHED_WALLETS = 4_096;

export class MasterSeed {
  private readonly cache = new LRUCache<number, HDNodeWallet>({ max: CACHED_WALLETS });
  /**
   * m/44'/60'/0'/0, derived once: a wallet is then one child step (~0.5 ms) instead of the mnemonic's PBKDF2
   * and five steps (~9 ms on the event loop, paid by each signer's first write after a start).
   */
  private readonly account: HDNodeWallet;
  private constructor(mnemonic: Mnemonic) {
    this.account = HDNodeWallet.fromMnemonic(mnemonic, "m/44'/60'/0'/0");
  }

  /** The seed as it is kept unsealed (the keys CLI and tests; a sealed file is refused, naming its key). */
  static load(dataDir: string, env: Record<string, string | undefined> = process.env): MasterSeed {
    if (env.MASTER_MNEMONIC) return new MasterSeed(Mnemonic.fromPhrase(env.MASTER_MNEMONIC.trim()));
    const file = join(dataDir, "master-seed");
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      if (isSealed(text)) throw sealedWithoutKey(file, text);
      return new MasterSeed(Mnemonic.fromPhrase(text.trim()));
    }
    mkdirSync(dataDir, { recursive: true });
    const phrase = Wallet.createRandom().mnemonic!.phrase;
    writeFileSync(file, phrase + "\n", { mode: 0o600, flag: "wx" });
    return new MasterSeed(Mnemonic.fromPhrase(phrase));
  }

  /**
   * With a sealer, the file holds the phrase sealed (sealedSeed.ts): opened with its key, made sealed, or a
   * plain one sealed in place (written beside, then renamed over it). MASTER_MNEMONIC bypasses the file.
   */
  static async open(dataDir: string, env: Record<string, string | undefined>, sealer?: Sealer): Promise<MasterSeed> {
    if (!sealer || env.MASTER_MNEMONIC) return MasterSeed.load(dataDir, env);
    const file = join(dataDir, "master-seed");
    const key = await sealer.key();
    let phrase: string;
    if (existsSync(file)) {
      const text = readFileSync(file, "utf8");
      if (isSealed(text)) return new MasterSeed(Mnemonic.fromPhrase(unseal(text, key, file)));
      phrase = text.trim();
    } else {
      mkdirSync(dataDir, { recursive: true });
      phrase = Wallet.createRandom().mnemonic!.phrase;
    }
    const next = `${file}.sealing`;
    writeFileSync(next, seal(phrase, key, sealer.name), { mode: 0o600 });
    renameSync(next, file);
    return new MasterSeed(Mnemonic.fromPhrase(phrase));
  }

  /** Wallet n. Index 0 is the public try-it-out signer; API keys get 1, 2, … */
  wallet(index: number): HDNodeWallet {
    let w = this.cache.get(index);
    if (!w) this.cache.set(index, (w = this.account.deriveChild(index)));
    return w;
  }

  /** Keeps the phrase out of util.inspect / JSON / console.log. */
  toJSON(): string {
    return "[MasterSeed]";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "[MasterSeed]";
  }
}

function sealedWithoutKey(file: string, text: string): Error {
  return new Error(
    `${file} is sealed (by ${sealedBy(text)}) and no key to open it is configured: set SEAL_MASTER_SEED (keyFile with ` +
      "MASTER_SEED_KEY_FILE, or pkcs11 with PKCS11_LIBRARY, PKCS11_TOKEN_LABEL and PKCS11_PIN_FILE) to what sealed it",
  );
}
