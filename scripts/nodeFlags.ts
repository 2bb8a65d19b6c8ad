// The Node flags `npm start` runs the gateway's bundle with (package.json `config.nodeFlags`), read from that
// one place so the bench and the tests that run the bundle run it as production does.
import { readFileSync } from "node:fs";

export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { config: { nodeFlags: string } };
  return pkg.config.nodeFlags.split(/\s+/).filter(Boolean);
}
