// A sealed master seed (#66): with SEAL_MASTER_SEED, DATA_DIR/master-seed is ciphertext under a key kept
// elsewhere (a key file, or a key derived in a PKCS#11 token). The gateway starts with that key and the same
// wallets; without it, or with another, it refuses to start and says what is missing. A plain file is sealed
// in place, keeping its wallets.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Mnemonic } from "ethers";
import { describe, expect, it } from "vitest";
import type { GatewayConfig } from "../../src/config/config.js";
import { startGateway } from "../../src/gateway.js";
import { MasterSeed } from "../../src/keys/masterSeed.js";
import { unseal } from "../../src/keys/sealedSeed.js";
import { createLogger } from "../../src/log/logger.js";
import { recordSecret, testConfig } from "../helpers/gateway.js";
import { softToken } from "../helpers/softhsm.js";

const log = createLogger("silent");
const keyFile = (): string => {
  const f = join(mkdtempSync(join(tmpdir(), "seal-key-")), "seed.key");
  writeFileSync(f, randomBytes(32).toString("hex"), { mode: 0o600 });
  return f;
};

/** The try-it-out signer's address a gateway on `dataDir` starts with, or the error it refuses with. */
async function startOn(dataDir: string, signer: Partial<GatewayConfig["signer"]>): Promise<string> {
  const config = testConfig({
    mutate: (c) => {
      c.dataDir = dataDir;
      Object.assign(c.signer, signer);
    },
  });
  const gw = await startGateway(config, { log });
  try {
    return gw.publicSignerAddress;
  } finally {
    await gw.close();
  }
}

describe("a sealed master seed", () => {
  it("with a key file: the file is not a phrase, a restart with the key keeps the wallets, without it (or another) the start is refused", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-sealed-"));
    const key = keyFile();
    const first = await startOn(dataDir, { sealSeed: "keyFile", sealKeyFile: key });
    const text = readFileSync(join(dataDir, "master-seed"), "utf8");
    const phrase = unseal(text, Buffer.from(readFileSync(key, "utf8"), "hex"), "master-seed");
    recordSecret(phrase);
    expect(Mnemonic.isValidMnemonic(text.trim())).toBe(false);
    expect(text).not.toContain(phrase.split(" ")[0]! + " " + phrase.split(" ")[1]!);
    expect(text).toMatch(/sealed by: the key file seed\.key/);
    expect(await startOn(dataDir, { sealSeed: "keyFile", sealKeyFile: key })).toBe(first);
    await expect(startOn(dataDir, {})).rejects.toThrow(/master-seed is sealed \(by the key file seed\.key\).*SEAL_MASTER_SEED.*MASTER_SEED_KEY_FILE/);
    await expect(startOn(dataDir, { sealSeed: "keyFile", sealKeyFile: keyFile() })).rejects.toThrow(/the key given does not open it/);
  });

  it("a plain seed file is sealed in place on the first start with a seal, and keeps its wallets", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-plain-"));
    const plain = MasterSeed.load(dataDir, {}).wallet(0).address;
    recordSecret(readFileSync(join(dataDir, "master-seed"), "utf8"));
    const key = keyFile();
    expect(await startOn(dataDir, { sealSeed: "keyFile", sealKeyFile: key })).toBe(plain);
    expect(Mnemonic.isValidMnemonic(readFileSync(join(dataDir, "master-seed"), "utf8").trim())).toBe(false);
  });

  it("sealed by a PKCS#11 token: opened with the token, refused without it", async () => {
    const token = softToken("seed-seal");
    const pkcs11 = { library: token.library, tokenLabel: token.tokenLabel, pinFile: token.pinFile, sessions: 1 };
    const dataDir = mkdtempSync(join(tmpdir(), "gw-token-sealed-"));
    const first = await startOn(dataDir, { sealSeed: "pkcs11", pkcs11 });
    expect(readFileSync(join(dataDir, "master-seed"), "utf8")).toMatch(/sealed by: the PKCS#11 token "seed-seal"/);
    expect(await startOn(dataDir, { sealSeed: "pkcs11", pkcs11 })).toBe(first);
    await expect(startOn(dataDir, {})).rejects.toThrow(/sealed \(by the PKCS#11 token "seed-seal"\)/);
  });
});
