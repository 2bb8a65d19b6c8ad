// Runs bench/fanoutFloor.c (compiled here with the system's C compiler): the least any server spends fanning
// one message out to N loopback sockets on this machine, for section 7's rows to be read against.
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";

export interface FloorRow {
  threads: number;
  subscribers: number;
  rounds: number;
  spreadP50Ms: number;
  spreadP99Ms: number;
}

/** The compiled floor, or undefined where there is no C compiler (the rows are then left out, and say so). */
export function buildFanoutFloor(dir: string): string | undefined {
  const binary = join(dir, "fanoutFloor");
  try {
    execFileSync("cc", ["-O2", "-pthread", "-o", binary, "bench/fanoutFloor.c"], { stdio: "ignore" });
    return binary;
  } catch {
    return undefined;
  }
}

export async function fanoutFloor(binary: string, subscribers: number, threads: number, intervalMs: number, rounds: number): Promise<FloorRow> {
  const server = spawn(binary, ["server", String(subscribers), String(threads), String(intervalMs), String(rounds)], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d: Buffer) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    server.once("exit", () => reject(new Error("fanoutFloor server exited")));
  });
  const client = spawn(binary, ["client", String(subscribers), port, String(rounds)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  client.stdout.on("data", (d: Buffer) => void (out += d));
  await new Promise((resolve) => client.once("exit", resolve));
  server.kill();
  const r = JSON.parse(out) as { rounds: number; spreadP50: number; spreadP99: number };
  return { threads, subscribers, rounds: r.rounds, spreadP50Ms: r.spreadP50, spreadP99Ms: r.spreadP99 };
}
