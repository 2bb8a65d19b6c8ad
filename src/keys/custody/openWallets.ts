// The wallets configuration names (config `signer`): the master seed's, or a PKCS#11 token's.
import type { GatewayConfig } from "../../config/config.js";
import type { Logger } from "../../log/logger.js";
import { MasterSeed } from "../masterSeed.js";
import { seedWallets } from "./seedWallets.js";
import type { Wallets } from "./wallets.js";

export async function openWallets(config: Pick<GatewayConfig, "signer" | "dataDir" | "masterMnemonic">, log: Logger): Promise<Wallets> {
  const { kind, pkcs11 } = config.signer;
  if (kind === "pkcs11") {
    // Loaded only here: a gateway on the seed never loads the FFI.
    const { TokenWallets } = await import("./pkcs11/tokenWallets.js");
    return TokenWallets.open({ library: pkcs11.library!, tokenLabel: pkcs11.tokenLabel!, pinFile: pkcs11.pinFile!, sessions: pkcs11.sessions }, log);
  }
  return seedWallets(MasterSeed.load(config.dataDir, config.masterMnemonic ? { MASTER_MNEMONIC: config.masterMnemonic } : {}));
}
