#!/usr/bin/env node
// A `solc` command line for Foundry's forge, made of the npm solc package (solcjs), because these machines
// have no network for forge to download a native solc. It does the two things forge asks of solc:
// `--version`, and `--standard-json` (input on stdin, output on stdout). Import paths are read from disk.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const solc = require(process.env.SOLC_SHIM_PACKAGE ?? "solc-0.8.24");
const args = process.argv.slice(2);

if (args.includes("--version")) {
  // forge parses "Version: x.y.z+commit..." like a native solc's answer.
  console.log(`solc, the solidity compiler commandline interface\nVersion: ${solc.version()}`);
  process.exit(0);
}
if (!args.includes("--standard-json")) {
  console.error("this solc shim only answers --version and --standard-json");
  process.exit(1);
}
const basePath = args.includes("--base-path") ? args[args.indexOf("--base-path") + 1] : process.cwd();
const input = readFileSync(0, "utf8");
const findImports = (path) => {
  try {
    return { contents: readFileSync(resolve(basePath, path), "utf8") };
  } catch {
    return { error: `not found: ${path}` };
  }
};
process.stdout.write(solc.compile(input, { import: findImports }));
