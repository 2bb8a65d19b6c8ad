// `npm start` runs embedded anvil for both networks and leaves no anvil process behind: on Ctrl-C
// (SIGINT), on SIGTERM, and even when the gateway itself is killed with SIGKILL.
import { describe, expect, it } from "vitest";
import { spawn, execFileSync } from "node:child_process";
import { descendants, isAlive } from "../helpers/processes.js";

function anvilPids(root: number): number[] {
  return descendants(root).filter((p) => {
    try {
      return execFileSync("ps", ["-o", "comm=", "-p", String(p)], { encoding: "utf8" }).trim() === "anvil";
    } catch {
      return false;
    }
  });
}

async function startGatewayProcess(): Promise<{ pid: number; urls: string[]; exited: Promise<number | null> }> {
  // `npm start` itself, in its own process group as a terminal would run it, on free ports.
  const child = spawn("npm", ["start", "--silent"], {
    env: { ...process.env, TESTNET_PORT: "0", MAINNET_PORT: "0", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  // With SIGKILL only the gateway dies; npm exits once its child does.
  const urls: string[] = [];
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const found = [...out.matchAll(/: (http:\/\/[\d.:]+)/g)].map((m) => m[1]!);
      if (found.length === 2) {
        urls.push(...found);
        resolve();
      }
    });
    child.on("exit", () => reject(new Error("gateway exited before printing its addresses:\n" + out)));
  });
  return { pid: child.pid!, urls, exited };
}

describe("embedded anvil lifecycle", () => {
  for (const signal of ["SIGINT", "SIGTERM", "SIGKILL"] as const) {
    it(`no anvil survives ${signal}`, async () => {
      const gw = await startGatewayProcess();
      const anvils = anvilPids(gw.pid);
      expect(anvils).toHaveLength(2);
      const res = await fetch(gw.urls[0] + "/", { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
      expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: "0x133edcb" });
      // Ctrl-C and SIGTERM go to the whole group (npm and the gateway); SIGKILL hits the gateway alone.
      // npm → sh → node: the gateway is the innermost process running the bundle npm start built.
      const gateway = descendants(gw.pid)
        .filter((p) => execFileSync("ps", ["-o", "args=", "-p", String(p)], { encoding: "utf8" }).includes("dist/main.mjs"))
        .pop()!;
      if (signal === "SIGKILL") process.kill(gateway, signal);
      else process.kill(-gw.pid, signal);
      await gw.exited;
      const deadline = Date.now() + 5000;
      while (anvils.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(anvils.filter(isAlive)).toEqual([]);
    });
  }
});
