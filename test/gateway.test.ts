// Starting the gateway: its networks start together, and when one cannot start, the gateway's start fails
// with that network's error and leaves nothing of the others running.
import { describe, it, expect } from "vitest";
import { createServer, type Server } from "node:net";
import { appendFileSync, mkdirSync } from "node:fs";
import { startGateway } from "../src/gateway.js";
import { createLogger } from "../src/log/logger.js";
import { LOG_FILE, postJson, recordGatewaySeed, testConfig } from "./helpers/gateway.js";
import { isAlive } from "./helpers/processes.js";

const listening = (): Promise<Server> =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => resolve(s));
  });

describe("gateway start", () => {
  it("both networks answer once the start returns", async () => {
    mkdirSync("test-artifacts", { recursive: true });
    const config = testConfig({ networks: ["testnet", "mainnet"] });
    const gw = await startGateway(config, { log: createLogger("debug", {}, (line) => appendFileSync(LOG_FILE, line)) });
    recordGatewaySeed(config);
    try {
      const ids = await Promise.all(gw.networks.map(async (n) => ((await postJson(n.url + "/", { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })).json as { result: string }).result));
      expect(ids).toEqual(["0x133edcb", "0x18a92"]);
    } finally {
      await gw.close();
    }
  });

  it("a network that cannot start (its port is taken) fails the start, and the other network's node is stopped", async () => {
    const taken = await listening();
    const port = (taken.address() as { port: number }).port;
    const lines: string[] = [];
    const config = testConfig({ networks: ["testnet", "mainnet"], mutate: (c) => void (c.networks.find((n) => n.name === "mainnet")!.port = port) });
    try {
      await expect(startGateway(config, { log: createLogger("info", {}, (line) => void lines.push(line)) })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      taken.close();
    }
    recordGatewaySeed(config);
    const pids = lines.flatMap((l) => {
      const entry = JSON.parse(l) as { msg: string; pid?: number };
      return entry.msg === "embedded anvil started" && entry.pid !== undefined ? [entry.pid] : [];
    });
    // Both nodes had started before the main network's listen failed; neither is left behind.
    expect(pids).toHaveLength(2);
    expect(pids.filter(isAlive)).toEqual([]);
  });
});
