// The wallets configuration names (config `signer`): the master seed's, or a PKCS#11 token's.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { GatewayConfig } from "../../config/config.js";
import type { Logger } from "../../log/logger.js";
import type { Exclusive } from "../../store/exclusive.js";
import { MasterSeed } from "../masterSeed.js";
import type { Sealer } from "../sealedSeed.js";
import { seedWallets } from "./seedWallets.js";
import type { Wallets } from "./wallets.js";

/**
 * `store.exclusive` keeps replicas sharing a token from each making the same key there: wallet n, the
 * callback root, the seal key are found or made by one process at a time.
 */
export async function openWallets(
  config: Pick<GatewayConfig, "signer" | "dataDir" | "masterMnemonic">,
  log: Logger,
  store: { exclusive: Exclusive },
): Promise<Wallets> {
  const { kind, pkcs11 } = config.signer;
  if (kind === "pkcs11") {
    // Loaded only here: a gateway on the seed never loads the FFI.
    const { TokenWallets } = await import("./pkcs11/tokenWallets.js");
    return TokenWallets.open(
      { library: pkcs11.library!, tokenLabel: pkcs11.tokenLabel!, pinFile: pkcs11.pinFile!, sessions: pkcs11.sessions, exclusive: store.exclusive },
      log,
    );
  }
  const env = config.masterMnemonic ? { MASTER_MNEMONIC: config.masterMnemonic } : {};
  return seedWallets(await MasterSeed.open(config.dataDir, env, sealerOf(config.signer, store.exclusive)));
}

/** What seals the master seed on disk, if anything. */
function sealerOf(signer: GatewayConfig["signer"], exclusive: Exclusive): Sealer | undefined {
  if (signer.sealSeed === "keyFile") {
    const file = signer.sealKeyFile!;
    return {
      name: `the key file ${basename(file)}`,
      key: async () => {
        const hex = readFileSync(file, "utf8").trim();
        if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`MASTER_SEED_KEY_FILE (${file}) must hold 64 hex digits (32 random bytes)`);
        return Buffer.from(hex, "hex");
      },
    };
  }
  if (signer.sealSeed === "pkcs11") {
    const { library, tokenLabel, pinFile } = signer.pkcs11;
    return {
      name: `the PKCS#11 token "${tokenLabel}"`,
      key: async () => {
        const { openTokenSession, tokenHmac, tokenLock } = await import("./pkcs11/tokenSession.js");
        return exclusive(tokenLock(tokenLabel!), () => {
          const { ck, session } = openTokenSession({ library: library!, tokenLabel: tokenLabel!, pinFile: pinFile! });
          return tokenHmac(ck, session, "chain-gateway seed seal", "chain-gateway master seed v1");
        });
      },
    };
  }
  return undefined;
}
