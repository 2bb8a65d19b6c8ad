// Runs solc off the main thread: a compile takes seconds of CPU and must not stall every other request.
// Plain JS so it loads in a worker under node, tsx and vitest alike.
import { parentPort } from "node:worker_threads";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
/** Each compiler (a package: "solc", or an alias such as "solc-0.8.24") is loaded on first use and kept. */
const compilers = new Map();
function compiler(pkg) {
  let solc = compilers.get(pkg);
  if (!solc) compilers.set(pkg, (solc = require(pkg)));
  return solc;
}

// Only @openzeppelin/contracts imports resolve (from the package the gateway ships); nothing else on disk.
function findImports(path) {
  if (!path.startsWith("@openzeppelin/contracts/") || path.includes("..")) {
    return { error: `import "${path}" not found: only @openzeppelin/contracts/... imports are available` };
  }
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") };
  } catch {
    return { error: `import "${path}" not found in @openzeppelin/contracts` };
  }
}

// One compile at a time: the pool (compileSolidity.ts) sends the next only after this one's answer.
parentPort.on("message", ({ input, pkg }) => {
  try {
    const solc = compiler(pkg);
    parentPort.postMessage({ output: solc.compile(input, { import: findImports }), version: solc.version() });
  } catch (err) {
    parentPort.postMessage({ error: String(err?.message ? err.message : err) });
  }
});
