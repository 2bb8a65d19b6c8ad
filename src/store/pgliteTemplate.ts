// A new embedded store's PGlite cluster, copied from a pristine one when this user already has it. initdb
// (PostgreSQL compiled to WebAssembly) took ~3.4 s of a fresh data directory's 5 s start here; copying its
// 39 MB result takes a tenth of a second. The first initdb on a machine publishes its result, untouched by any
// gateway, in the user's cache directory (one per PGlite version); later new data directories start from a
// copy. Anything unexpected (no cache directory, a copy that fails, a cache another user could write) falls
// back to initdb: the template only ever saves time.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** The PGlite version's own folder under `cacheRoot`, or undefined when PGlite's version cannot be read. */
export function templateDir(cacheRoot: string): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const { version } = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as { version?: unknown };
    return typeof version === "string" ? join(cacheRoot, `pglite-${version}`) : undefined;
  } catch {
    return undefined;
  }
}

/** This user's cache for the gateway: $XDG_CACHE_HOME/chain-gateway, else ~/.cache/chain-gateway. */
export function defaultCacheRoot(): string | undefined {
  try {
    return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "chain-gateway");
  } catch {
    return undefined; // no home directory to speak of
  }
}

/**
 * Only a cache directory of this user's that nobody else can write is trusted: a planted cluster could hold
 * rows (an API key) that every new gateway would then serve.
 */
function trusted(cacheRoot: string): boolean {
  try {
    const s = statSync(cacheRoot);
    return s.isDirectory() && (process.getuid === undefined || s.uid === process.getuid()) && (s.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** Where this PGlite version's template lives, or undefined when there is no cache or no version to key it by. */
function templatePlace(cacheRoot: string | undefined): { root: string; dir: string } | undefined {
  const dir = cacheRoot === undefined ? undefined : templateDir(cacheRoot);
  return cacheRoot === undefined || dir === undefined ? undefined : { root: cacheRoot, dir };
}

/** Fills the empty directory `dir` with a new cluster: a copy of the template, else `initdb(dir)`. */
export async function createCluster(dir: string, initdb: (dir: string) => Promise<void>, cacheRoot = defaultCacheRoot()): Promise<"copied" | "initdb"> {
  const template = templatePlace(cacheRoot);
  if (template && trusted(template.root) && existsSync(join(template.dir, "PG_VERSION"))) {
    try {
      cpSync(template.dir, dir, { recursive: true });
      return "copied";
    } catch {
      // Start again from nothing: initdb wants an empty directory.
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    }
  }
  await initdb(dir);
  if (template) publish(dir, template);
  return "initdb";
}

/** Copies the just-initialised cluster to the template, whole or not at all (a rename), if none is there yet. */
function publish(dir: string, template: { root: string; dir: string }): void {
  const staging = `${template.dir}.${process.pid}.${Date.now()}`;
  try {
    mkdirSync(template.root, { recursive: true, mode: 0o700 });
    if (!trusted(template.root) || existsSync(template.dir)) return;
    cpSync(dir, staging, { recursive: true });
    // Another process may have published meanwhile; then its copy stays and ours goes.
    renameSync(staging, template.dir);
  } catch {
    // No cache (read-only home, a race lost): the next new data directory runs initdb too.
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Removes this user's template (PGlite could not open a copy of it); the next initdb publishes a new one. */
export function discardTemplate(cacheRoot = defaultCacheRoot()): void {
  const template = templatePlace(cacheRoot);
  if (template && trusted(template.root)) rmSync(template.dir, { recursive: true, force: true });
}
