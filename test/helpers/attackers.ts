// Attackers and loads in their own processes (raw sockets, as fast as the socket takes them): each prints
// its stats as JSON when it ends.
import { spawn } from "node:child_process";

export interface AttackStats {
  connections: number;
  served: number;
  closedAtAccept: number;
  streams: number;
  goaway: Record<string, number>;
}

export interface FloodStats {
  connections: number;
  answered503: number;
  answeredOther: number;
  closedUnanswered: number;
}

/**
 * Runs a helper script with `args` and resolves to what it printed, parsed. `yielding`: at the lowest CPU
 * priority (nice 19). It still runs as fast as the gateway answers it whenever a core is free, but its own
 * client work does not take a core from the gateway: on two cores, an attacker standing in for a remote
 * client would otherwise be measured as the gateway's cost (latencyProbe.mjs is the other half).
 */
function runAttacker<T>(script: string, args: string[], yielding = false): Promise<T> {
  const [command, ...argv] = [...(yielding ? ["nice", "-n", "19"] : []), process.execPath, script, ...args];
  const child = spawn(command!, argv, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => child.on("exit", () => (out ? resolve(JSON.parse(out) as T) : reject(new Error(`${script} printed nothing`)))));
}

/** h2RawAttack.mjs: `mode` reset, split or flood, from `localAddress` to 127.0.0.1:`port`. */
export function h2Attack(port: number, seconds: number, mode: string, localAddress: string): Promise<AttackStats> {
  return runAttacker("test/helpers/h2RawAttack.mjs", ["127.0.0.1", String(port), String(seconds), mode, localAddress]);
}

/** connectionFlood.mjs: `hold` connections held, then 50 reconnecting loops (with `call`, one JSON-RPC call each). */
export function connectionFlood(port: number, seconds: number, localAddress: string, hold: number, call = false): Promise<FloodStats> {
  return runAttacker("test/helpers/connectionFlood.mjs", [String(port), String(seconds), localAddress, String(hold), "50", ...(call ? ["call"] : [])]);
}

/** repeatedPost.mjs: `file` posted `count` times in a row to `url` from `localAddress`; status -> count. */
export function repeatedPost(url: string, file: string, count: number, localAddress: string, chunked = false): Promise<Record<string, number>> {
  return runAttacker("test/helpers/repeatedPost.mjs", [url, file, String(count), localAddress, ...(chunked ? ["chunked"] : [])], true);
}

/** pacedWrites.mjs: `count` ZKT writes to `url`, `perSecond`, the `keys` in turn. */
export function pacedWrites(url: string, count: number, perSecond: number, keys: string[]): Promise<{ statuses: Record<string, number>; ms: number }> {
  return runAttacker("test/helpers/pacedWrites.mjs", [url, String(count), String(perSecond), ...keys], true);
}
