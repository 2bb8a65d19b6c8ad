// A PostgreSQL cluster of a test's own (initdb in a temporary directory, its own port), so the test can stop it
// as an operator would (`pg_ctl stop -m immediate`: every backend killed, crash recovery on the next start)
// without taking the machine's shared one away from the suite's other files. The server runs as the
// `postgres` user when the test runs as root (PostgreSQL refuses root).
import { execFile } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./anvilProcess.js";

const run = promisify(execFile);

export interface PrivatePostgres {
  url: string;
  /** `pg_ctl stop -m immediate`. */
  stopImmediate(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and leaves the directory to the OS's temp cleanup. */
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<version>/bin), if any. */
export function postgresBin(): string | undefined {
  try {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    return versions[0] ? `/usr/lib/postgresql/${versions[0]}/bin` : undefined;
  } catch {
    return undefined;
  }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "pg-own-"));
  const data = join(dir, "data");
  if (root) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    chmodSync(dir, 0o700);
  }
  const as = (cmd: string, args: string[]) => (root ? run("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]) : run(join(bin, cmd), args));
  await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const start = async () => {
    await as("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stopImmediate: async () => {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    },
    start,
    destroy: async () => {
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    },
  };
}
