// Where a worker's code is: the bundle's .mjs beside the caller's bundle (`npm run build` emits one per
// worker), or, run from source (tests, tsx), the .ts beside the caller's source, loaded through tsx.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** `name` without extension, relative to `base` (the caller's import.meta.url); `bundledArgv` for the bundle. */
export function workerEntry(base: string, name: string, bundledArgv: string[] = []): { path: string; execArgv: string[] } {
  const bundled = fileURLToPath(new URL(`${name}.mjs`, base));
  if (existsSync(bundled)) return { path: bundled, execArgv: bundledArgv };
  return { path: fileURLToPath(new URL(`${name}.ts`, base)), execArgv: ["--import", "tsx"] };
}
