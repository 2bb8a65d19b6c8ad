// Runs h2RawAttack.mjs (raw HTTP/2 frames, as fast as the socket takes them) in its own process.
import { spawn } from "node:child_process";

export interface AttackStats {
  connections: number;
  served: number;
  closedAtAccept: number;
  streams: number;
  goaway: Record<string, number>;
}

/** `mode`: reset, split or flood (see h2RawAttack.mjs); from `localAddress` to 127.0.0.1:`port`. */
export function h2Attack(port: number, seconds: number, mode: string, localAddress: string): Promise<AttackStats> {
  const child = spawn(process.execPath, ["test/helpers/h2RawAttack.mjs", "127.0.0.1", String(port), String(seconds), mode, localAddress], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) =>
    child.on("exit", () => (out ? resolve(JSON.parse(out) as AttackStats) : reject(new Error("the attacker printed nothing")))),
  );
}
