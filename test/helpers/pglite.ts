// Data directories as versions before the SQLite store left them, with a PGlite store (DATA_DIR/pglite). Nothing
// in the gateway creates one any more, so tests copy a pristine cluster that globalSetup makes once (initdb takes
// seconds; a copy, milliseconds).
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// Its package.json is not exported: read it from node_modules (a new version gets a new template).
const version = (JSON.parse(readFileSync(resolve("node_modules/@electric-sql/pglite/package.json"), "utf8")) as { version: string }).version;
const TEMPLATE = resolve("test-artifacts", `pglite-template-${version}`);

/** Makes the pristine cluster unless this machine has it (initdb in a child process, whose memory then goes). */
export function ensurePgliteTemplate(): void {
  if (existsSync(join(TEMPLATE, "PG_VERSION"))) return;
  const staging = `${TEMPLATE}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  execFileSync(process.execPath, ["--input-type=module", "-e", 'import { PGlite } from "@electric-sql/pglite"; await (await PGlite.create(process.argv[1])).close();', staging]);
  renameSync(staging, TEMPLATE);
}

/** A new data directory holding a PGlite store of its own (empty: openSqlClient and migrate fill it). */
export function pgliteDataDir(prefix: string): string {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(TEMPLATE, join(dataDir, "pglite"), { recursive: true });
  return dataDir;
}
