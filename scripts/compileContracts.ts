// `npm run build:contracts`: compiles contracts/*.sol with the pinned solc into src/platform/*.artifact.json
// (committed, so the gateway never compiles at start; a test checks the artifacts are current).
import { readFileSync, writeFileSync } from "node:fs";
import { SolidityCompiler } from "../src/zkt/solc/compileSolidity.js";

export const CONTRACTS = [
  { source: "contracts/DemoToken.sol", name: "DemoToken", artifact: "src/platform/demoToken.artifact.json" },
  { source: "contracts/Multicall3.sol", name: "Multicall3", artifact: "src/platform/multicall3.artifact.json" },
];

export async function compileAll(): Promise<Map<string, string>> {
  const compiler = new SolidityCompiler();
  const out = new Map<string, string>();
  try {
    for (const c of CONTRACTS) {
      const compiled = await compiler.compile(readFileSync(c.source, "utf8"), { evmVersion: "paris", contractName: c.name });
      out.set(c.artifact, JSON.stringify({ contractName: compiled.name, abi: compiled.abi, bytecode: compiled.bytecode }, null, 2) + "\n");
    }
  } finally {
    await compiler.close();
  }
  return out;
}

if (process.argv[1]?.endsWith("compileContracts.ts")) {
  for (const [path, text] of await compileAll()) writeFileSync(path, text);
}
