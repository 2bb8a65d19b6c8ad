// The gateway as a real process (`src/main.ts`), for tests that kill and restart it.
import { spawn, type ChildProcess } from "node:child_process";

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

export async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, NETWORKS: "testnet", TESTNET_PORT: "0", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  child.stderr!.resume();
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /testnet \(chain id \d+\): (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", () => reject(new Error("gateway exited before it was ready:\n" + out)));
  });
  return { child, url, exited };
}
