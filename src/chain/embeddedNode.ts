// Embedded dev node: anvil from the npm package @foundry-rs/anvil, one per network with no upstream.
// Interval mining, not automine: DESIGN.md measured automine collapsing under concurrent senders.
import { spawn } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { once } from "node:events";
import type { FeeMode } from "../config/config.js";
import { restoreStateFile, type StateRestored, TORN_STATE, writeGoodCopy } from "./stateFileCopy.js";

/** The embedded chain's block gas limit (anvil's default, made explicit). */
export const EMBEDDED_BLOCK_GAS_LIMIT = 30_000_000;

export interface EmbeddedNodeOptions {
  chainId: number;
  blockTimeSeconds: number;
  feeMode: FeeMode;
  /**
   * The chain survives restarts: anvil loads this file at start, dumps to it every `stateIntervalSeconds`
   * (a kill -9 loses at most that much) and on exit; a whole copy beside it replaces a file a crash tore.
   */
  stateFile?: string;
  stateIntervalSeconds?: number;
  /** How often a whole copy of the state is kept beside the file, for a start after a torn dump (stateFileCopy.ts). */
  goodCopyIntervalMs?: number;
  /** The state file was torn and has been replaced (by the last whole copy, or by nothing: a new chain). */
  onStateRestored?: (restored: StateRestored) => void;
  /** A whole copy could not be written (the next interval tries again). */
  onCopyFailed?: (err: Error) => void;
  /** The node's port on 127.0.0.1 (a firewall rule, a tool pointed at it); a free one when unset. */
  port?: number;
  /** Extra anvil arguments (tests). */
  extraArgs?: string[];
  startTimeoutMs?: number;
}

export interface EmbeddedNode {
  url: string;
  pid: number;
  /** It went on with a chain kept in its state file (false: a new chain). */
  continued: boolean;
  stop(): Promise<void>;
}

/**
 * The anvil binary, looked for where it can be: ANVIL_PATH when set; the platform package npm installed
 * beside @foundry-rs/anvil (Linux x64/arm64, macOS x64/arm64, Windows x64); the copy @foundry-rs/anvil's
 * install script fetched into its own folder when that package was left out; then `anvil` on PATH.
 */
export function anvilBinaryPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ANVIL_PATH) {
    if (!existsSync(env.ANVIL_PATH)) throw new Error(`ANVIL_PATH is set but ${env.ANVIL_PATH} does not exist`);
    return env.ANVIL_PATH;
  }
  const require = createRequire(import.meta.url);
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const exe = process.platform === "win32" ? "anvil.exe" : "anvil";
  const found = [
    () => join(dirname(require.resolve(`${pkg}/package.json`)), "bin", exe),
    () => join(dirname(require.resolve("@foundry-rs/anvil/package.json")), exe),
  ];
  for (const candidate of found) {
    try {
      const path = candidate();
      if (existsSync(path)) return path;
    } catch {
      // not installed: the next place
    }
  }
  const onPath = (env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, exe))
    .find((p) => existsSync(p));
  if (onPath) return onPath;
  throw new Error(
    `anvil is not installed for ${process.platform}/${process.arch}: not in the npm package ${pkg} (npm ci installs it), ` +
      "not fetched by @foundry-rs/anvil's install script, not at ANVIL_PATH and not on PATH. Run npm ci, or set ANVIL_PATH " +
      "to an anvil binary (https://getfoundry.sh), or configure upstreams so no embedded node is needed.",
  );
}

// anvil runs under a tiny sh watchdog that holds our stdin pipe: when this process dies for any reason
// (even SIGKILL) the pipe closes, `cat` returns, and the watchdog kills anvil, so no orphan survives us.
const WATCHDOG = 'exec 3<&0; "$@" </dev/null 3<&- & c=$!; (cat <&3 >/dev/null; kill $c 2>/dev/null) & w=$!; wait $c; s=$?; kill $w 2>/dev/null; exit $s';

export async function startEmbeddedNode(options: EmbeddedNodeOptions): Promise<EmbeddedNode> {
  let restored = false;
  // A port picked here can be taken before anvil binds it: then anvil exits, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      // A pinned port is checked first: another anvil there (same chain id) would answer for the new one.
      const continued = options.stateFile !== undefined && existsSync(options.stateFile);
      const node = { ...(await launch(options, await freePort(options.port))), continued };
      return options.stateFile ? keepingGoodCopy(node, options.stateFile, options) : node;
    } catch (err) {
      // A state file anvil will not load was torn by a crash mid-dump: replaced once, then started again.
      if (err instanceof TornStateFile && options.stateFile && !restored) {
        restored = true;
        options.onStateRestored?.(await restoreStateFile(options.stateFile));
        continue;
      }
      // A pinned port that is taken stays taken: said at once, not tried again.
      if (attempt >= 3 || !(err instanceof PortTaken) || options.port !== undefined) throw err;
    }
  }
}

/** Writes a whole copy of the state at start and every goodCopyIntervalMs while the node runs. */
function keepingGoodCopy(node: EmbeddedNode, stateFile: string, options: EmbeddedNodeOptions): EmbeddedNode {
  let writing: Promise<void> | undefined;
  const copy = (): void => {
    writing ??= writeGoodCopy(node.url, stateFile)
      .catch((err: unknown) => options.onCopyFailed?.(err as Error))
      .finally(() => (writing = undefined));
  };
  copy();
  const timer = setInterval(copy, options.goodCopyIntervalMs ?? 10_000);
  timer.unref();
  return {
    ...node,
    async stop() {
      clearInterval(timer);
      await writing;
      await node.stop();
    },
  };
}

class PortTaken extends Error {}
class TornStateFile extends Error {}

async function launch(options: EmbeddedNodeOptions, port: number): Promise<Omit<EmbeddedNode, "continued">> {
  const args = [
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--chain-id",
    String(options.chainId),
    "--block-time",
    String(options.blockTimeSeconds),
    ...(options.feeMode === "zero" ? ["--gas-price", "0", "--base-fee", "0"] : []),
    // The block gas limit, said rather than left to anvil's default: the gateway caps a call's gas to it
    // (rpc/callGasCap.ts), anvil having no cap and no EVM timeout of its own.
    "--gas-limit",
    String(EMBEDDED_BLOCK_GAS_LIMIT),
    // Quiet: anvil otherwise logs every request and every mined transaction, which this process had to read
    // and discard (a measurable CPU cost per transaction; bench/README.md). Quiet also drops its
    // "Listening on" line, hence the port chosen here.
    "--quiet",
    ...(options.stateFile ? ["--state", options.stateFile, "--state-interval", String(options.stateIntervalSeconds ?? 2)] : []),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn("/bin/sh", ["-c", WATCHDOG, "sh", anvilBinaryPath(), ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  const collect = (chunk: Buffer): void => void (out = (out + chunk.toString("utf8")).slice(-2_000));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) =>
      reject(
        /address already in use|os error 98/i.test(out)
          ? new PortTaken(out)
          : TORN_STATE.test(out)
            ? new TornStateFile(`anvil refused its state file: ${out.slice(-500)}`)
            : new Error(`anvil exited (code ${code}) before answering: ${out.slice(-500)}`),
      ),
    ),
  );
  exited.catch(() => undefined);
  try {
    // Another server on the port would answer too: it must be ours, with our chain id, still running.
    const chainId = await Promise.race([waitForRpc(url, options.startTimeoutMs ?? 20_000), exited]);
    if (Number(chainId) !== options.chainId || child.exitCode !== null) throw new PortTaken(`port ${port} answered with chain id ${chainId}`);
  } catch (err) {
    child.stdin?.end();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    url,
    pid: child.pid ?? -1,
    stop() {
      stopped ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, "exit");
        child.stdin?.end(); // the watchdog's cue to kill anvil
        await exited;
      })();
      return stopped;
    },
  };
}

/** A port free on loopback right now. */
/** A free port (0), or `wanted` if nothing listens there now; rejects when `wanted` is taken. */
function freePort(wanted = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (err) => reject(wanted ? new PortTaken(`port ${wanted} is in use: ${err.message}`) : err));
    server.listen(wanted, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls until the node answers eth_chainId; returns the chain id it answered. */
async function waitForRpc(url: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
      if (res.ok) return ((await res.json()) as { result: string }).result;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`anvil at ${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
