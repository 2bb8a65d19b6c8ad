// Embedded dev node: anvil from the npm package @foundry-rs/anvil, one per network with no upstream.
// Interval mining, not automine: DESIGN.md measured automine collapsing under concurrent senders.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { once } from "node:events";
import type { FeeMode } from "../config/config.js";

export interface EmbeddedNodeOptions {
  chainId: number;
  blockTimeSeconds: number;
  feeMode: FeeMode;
  /** Extra anvil arguments (tests). */
  extraArgs?: string[];
  startTimeoutMs?: number;
}

export interface EmbeddedNode {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Path of the anvil binary shipped in the platform package that @foundry-rs/anvil depends on. */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
  } catch {
    throw new Error(`anvil is not installed for ${process.platform}/${process.arch} (npm package ${pkg}); run npm ci`);
  }
}

// anvil runs under a tiny sh watchdog that holds our stdin pipe: when this process dies for any reason
// (even SIGKILL) the pipe closes, `cat` returns, and the watchdog kills anvil, so no orphan survives us.
const WATCHDOG = 'exec 3<&0; "$@" </dev/null 3<&- & c=$!; (cat <&3 >/dev/null; kill $c 2>/dev/null) & w=$!; wait $c; s=$?; kill $w 2>/dev/null; exit $s';

export async function startEmbeddedNode(options: EmbeddedNodeOptions): Promise<EmbeddedNode> {
  const args = [
    "--port", "0",
    "--host", "127.0.0.1",
    "--chain-id", String(options.chainId),
    "--block-time", String(options.blockTimeSeconds),
    ...(options.feeMode === "zero" ? ["--gas-price", "0", "--base-fee", "0"] : []),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn("/bin/sh", ["-c", WATCHDOG, "sh", anvilBinaryPath(), ...args], { stdio: ["pipe", "pipe", "pipe"] });
  const url = await waitForListening(child, options.startTimeoutMs ?? 20_000);
  await waitForRpc(url, options.startTimeoutMs ?? 20_000);
  // Keep draining anvil's per-request log so its pipe never fills and blocks it.
  child.stdout?.resume();
  child.stderr?.resume();
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

function waitForListening(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`anvil did not start within ${timeoutMs} ms: ${out.slice(-500)}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString("utf8");
      const m = /Listening on ([\d.]+):(\d+)/.exec(out);
      if (m) {
        cleanup();
        resolve(`http://${m[1]}:${m[2]}`);
      }
    };
    const onExit = (code: number | null): void => fail(new Error(`anvil exited (code ${code}) before listening: ${out.slice(-500)}`));
    const fail = (err: Error): void => {
      cleanup();
      child.stdin?.end();
      reject(err);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", onExit);
  });
}

async function waitForRpc(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`anvil at ${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
