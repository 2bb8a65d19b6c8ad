// The gateway as a real process (`src/main.ts`, or the `npm run build` bundle), for tests that kill and
// restart it or run what `npm start` runs.
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startNodeFlags } from "../../scripts/nodeFlags.js";
import { LOG_FILE, recordSecret } from "./gateway.js";

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** Everything it has logged so far (stderr). */
  log(): string;
}

/** `entry`: the source, the `npm run build` bundle, or a copy of that bundle at the given main.mjs path. */
export async function startGatewayProcess(
  env: Record<string, string>,
  entry: "source" | "bundle" | { bundle: string } = "source",
  /** `only`: `env` and PATH alone, none of the suite's or this helper's settings (a gateway configured by its file). */
  envMode: "suite" | "only" = "suite",
): Promise<GatewayProcess> {
  const args = entry === "source" ? ["--import", "tsx", "src/main.ts"] : [...startNodeFlags(), entry === "bundle" ? "dist/main.mjs" : entry.bundle];
  const child = spawn(process.execPath, args, {
    // A fresh dev chain per start unless a test asks for the kept one (its dumps cost every anvil CPU).
    env:
      envMode === "only"
        ? { PATH: process.env.PATH ?? "", ...env }
        : { ...process.env, NETWORKS: "testnet", TESTNET_PORT: "0", LOG_LEVEL: "debug", EMBEDDED_STATE: "false", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  // Its log joins the suite's server log, which the teardown greps for secrets.
  mkdirSync("test-artifacts", { recursive: true });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => {
    appendFileSync(LOG_FILE, d);
    log += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /testnet \(chain id \d+\): (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", () => reject(new Error("gateway exited before it was ready:\n" + out)));
  });
  if (env.MASTER_MNEMONIC) recordSecret(env.MASTER_MNEMONIC);
  else if (env.DATA_DIR && existsSync(join(env.DATA_DIR, "master-seed"))) recordSecret(readFileSync(join(env.DATA_DIR, "master-seed"), "utf8"));
  return { child, url, exited, log: () => log };
}
