// Around the whole suite: start each run with an empty server log, and after every file has run, fail the
// run if anything shaped like an API key reached the log (tests grep their own secrets too).
import { mkdirSync, readFileSync, rmSync, existsSync } from "node:fs";
import { LOG_FILE } from "./helpers/gateway.js";

export function setup(): () => void {
  mkdirSync("test-artifacts", { recursive: true });
  rmSync(LOG_FILE, { force: true });
  return () => {
    if (!existsSync(LOG_FILE)) return;
    const leaked = readFileSync(LOG_FILE, "utf8").match(/cgw_[A-Za-z0-9_-]{43}/g);
    if (leaked) throw new Error(`${leaked.length} API key(s) appeared in ${LOG_FILE}`);
  };
}
