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

/**
 * The first `pragma solidity …;` outside comments, or undefined. One linear pass over the source, on the event
 * loop: a regex for block comments is quadratic on an unterminated one.
 */
export function pragmaOf(code: string): string | undefined {
  let i = 0;
  while (i < code.length) {
    const c = code.charCodeAt(i);
    if (c === SLASH && code.charCodeAt(i + 1) === SLASH) {
      const nl = code.indexOf("\n", i + 2);
      if (nl === -1) return undefined;
      i = nl + 1;
    } else if (c === SLASH && code.charCodeAt(i + 1) === STAR) {
      const end = code.indexOf("*/", i + 2);
      if (end === -1) return undefined; // an unterminated comment runs to the end
      i = end + 2;
    } else if (c === LOWER_P && code.startsWith("pragma", i) && (i === 0 || !isWordChar(code.charCodeAt(i - 1)))) {
      PRAGMA.lastIndex = i;
      const m = PRAGMA.exec(code);
      if (m) return m[1]!.trim();
      i++;
    } else i++;
  }
  return undefined;
}

/** Anchored at lastIndex; each attempt is bounded (a version range is short), so the search stays linear. */
const PRAGMA = /pragma\s{1,64}solidity\s{1,64}([^;]{1,256});/y;
const SLASH = 0x2f;
const STAR = 0x2a;
const LOWER_P = 0x70;
function isWordChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
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
