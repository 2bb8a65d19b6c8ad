// The Solidity compilers the gateway ships (npm "solc" and aliases of older releases, in package.json), and
// the choice among them by a source's pragma: the newest one the pragma allows. Stability's docs tell users to
// write 0.8.24 or lower, so 0.8.24 (and 0.8.19, the last before Shanghai's PUSH0) ship beside the current one.
import semver from "semver";
import { GatewayError } from "../../errors.js";

export interface Compiler {
  version: string;
  /** The npm package (or alias) the compile worker loads. */
  pkg: string;
}

/** Newest first. Keep in step with package.json (test/zkt/compilerVersions.test.ts checks each is installed). */
export const COMPILERS: Compiler[] = [
  { version: "0.8.37", pkg: "solc" },
  { version: "0.8.24", pkg: "solc-0.8.24" },
  { version: "0.8.19", pkg: "solc-0.8.19" },
];

/** The first `pragma solidity …;` outside comments, or undefined. */
export function pragmaOf(code: string): string | undefined {
  const bare = code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "");
  return /\bpragma\s+solidity\s+([^;]+);/.exec(bare)?.[1]?.trim();
}

/** The compiler for a source: the newest installed one its pragma allows (the newest when it has none). */
export function compilerFor(code: string): Compiler {
  const pragma = pragmaOf(code);
  if (pragma === undefined) return COMPILERS[0]!;
  // Solidity's ranges are npm's, but for a few spellings: "=0.8.24" and ">= 0.8.0" read the same in semver.
  const range = semver.validRange(pragma.replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1"));
  const found = range ? COMPILERS.find((c) => semver.satisfies(c.version, range)) : undefined;
  if (!found) {
    throw new GatewayError(
      "compilation",
      `no installed Solidity compiler satisfies "pragma solidity ${pragma};" (available: ${COMPILERS.map((c) => c.version).join(", ")})`,
      {
        details: { pragma, available: COMPILERS.map((c) => c.version) },
      },
    );
  }
  return found;
}
