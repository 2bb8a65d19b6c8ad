// Around the whole suite: start each run with an empty server log, and after every file has run, fail the run if an API key, a master-seed phrase or a
// private key derived from one reached the log.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { HDNodeWallet, Mnemonic } from "ethers";
import { LOG_FILE, SECRETS_FILE } from "./helpers/gateway.js";

/** Wallet indexes checked per seed: the shared signer and the first keys' wallets. */
const WALLETS_PER_SEED = 12;

export function setup(): () => void {
  mkdirSync("test-artifacts", { recursive: true });
  rmSync(LOG_FILE, { force: true });
  rmSync(SECRETS_FILE, { force: true });
  // dist/ once, before any file runs: the packaging test packs it as it is (a build of its own would rewrite it
  // under the files that run it).
  execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
  return () => {
    if (!existsSync(LOG_FILE)) return;
    const log = readFileSync(LOG_FILE, "utf8");
    const leakedKeys = log.match(/cgw_[A-Za-z0-9_-]{43}/g);
    if (leakedKeys) throw new Error(`${leakedKeys.length} API key(s) appeared in ${LOG_FILE}`);
    const phrases = existsSync(SECRETS_FILE) ? [...new Set(readFileSync(SECRETS_FILE, "utf8").split("\n").filter(Boolean))] : [];
    const lower = log.toLowerCase();
    for (const phrase of phrases) {
      if (log.includes(phrase)) throw new Error(`a master-seed phrase appeared in ${LOG_FILE}`);
      const mnemonic = Mnemonic.fromPhrase(phrase);
      for (let i = 0; i < WALLETS_PER_SEED; i++) {
        const key = HDNodeWallet.fromMnemonic(mnemonic, `m/44'/60'/0'/0/${i}`).privateKey.slice(2);
        if (lower.includes(key)) throw new Error(`a private key (seed wallet ${i}) appeared in ${LOG_FILE}`);
      }
    }
    if (process.env.CI)
      process.stdout.write(`secrets check: ${phrases.length} seeds × ${WALLETS_PER_SEED} private keys and every API key absent from the server log\n`);
  };
}
