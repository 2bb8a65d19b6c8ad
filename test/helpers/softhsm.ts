// A real PKCS#11 token for tests: SoftHSM2 (Debian's softhsm2, installed by .ci/run) with its token store in a
// directory of its own, initialised here. SOFTHSM2_CONF is read when the module initialises, so it is set in
// this process before a gateway loads the module.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SOFTHSM_LIBRARY = "/usr/lib/softhsm/libsofthsm2.so";

export interface TestToken {
  library: string;
  tokenLabel: string;
  pinFile: string;
  pin: string;
}

/** A fresh, initialised token labelled `label` (user PIN in a file of mode 0600). */
export function softToken(label = "chain-gateway-test"): TestToken {
  if (!existsSync(SOFTHSM_LIBRARY)) throw new Error(`${SOFTHSM_LIBRARY} is missing: apt-get install softhsm2 (.ci/run does)`);
  const dir = process.env.SOFTHSM_TEST_DIR ?? mkdtempSync(join(tmpdir(), "softhsm-"));
  process.env.SOFTHSM_TEST_DIR = dir;
  const conf = join(dir, "softhsm2.conf");
  if (!existsSync(conf)) {
    mkdirSync(join(dir, "tokens"), { recursive: true });
    writeFileSync(conf, `directories.tokendir = ${join(dir, "tokens")}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  }
  process.env.SOFTHSM2_CONF = conf;
  const pin = "4711-test";
  execFileSync("softhsm2-util", ["--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", "so-4711"], { stdio: "ignore" });
  const pinFile = join(dir, `${label}.pin`);
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  return { library: SOFTHSM_LIBRARY, tokenLabel: label, pinFile, pin };
}

/** pkcs11-tool's listing of the token's objects (opensc), as an operator would read it. */
export function listObjects(token: TestToken): string {
  return execFileSync("pkcs11-tool", ["--module", token.library, "--token-label", token.tokenLabel, "--login", "--pin", token.pin, "--list-objects"], {
    encoding: "utf8",
  });
}
