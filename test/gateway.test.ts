// Starting the gateway: its networks start together, no network serves before every network is ready (the ports
// answer "starting" meanwhile), and when one cannot start, the gateway's start fails with that network's error
// and leaves nothing of the others running.
import { describe, it, expect } from "vitest";
import { createServer, type Server } from "node:net";
import { appendFileSync, mkdirSync } from "node:fs";
import { startGateway } from "../src/gateway.js";
import { createLogger } from "../src/log/logger.js";
import { LOG_FILE, postJson, recordGatewaySeed, testConfig } from "./helpers/gateway.js";
import { isAlive } from "./helpers/processes.js";
import { startFaultyUpstream } from "./helpers/faultyUpstream.js";
import { startEmbeddedNode } from "../src/chain/embeddedNode.js";

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
      const ids = await Promise.all(
        gw.networks.map(
          async (n) => ((await postJson(n.url + "/", { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })).json as { result: string }).result,
        ),
      );
      expect(ids).toEqual(["0x133edcb", "0x18a92"]);
    } finally {
      await gw.close();
    }
  });

  it("no network serves before every network is ready: a slow network holds the other's calls at 503 starting", async () => {
    // The main network's node answers the start's genesis read 3 s late; the test network alone is ready in ~1 s.
    const node = await startEmbeddedNode({ chainId: 101010, blockTimeSeconds: 0.25, feeMode: "zero" });
    const slow = await startFaultyUpstream(node.url);
    slow.slow(3_000, /"method":"eth_getBlockByNumber","params":\["0x0"/);
    const free = await listening();
    const testnetPort = (free.address() as { port: number }).port;
    free.close();
    const config = testConfig({
      networks: ["testnet", "mainnet"],
      mutate: (c) => {
        c.networks.find((n) => n.name === "testnet")!.port = testnetPort;
        c.networks.find((n) => n.name === "mainnet")!.upstreams = [slow.url];
      },
    });
    /** The test network answers a call (its port, held while the gateway starts, answers 503 before). */
    const accepts = async (): Promise<boolean> =>
      (await postJson(`http://127.0.0.1:${testnetPort}/`, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }).catch(() => undefined))?.status === 200;
    let done = false;
    const starting = startGateway(config, { log: createLogger("debug", {}, (line) => appendFileSync(LOG_FILE, line)) }).finally(() => void (done = true));
    let slowAskedAt = 0;
    let firstAcceptAt = 0;
    while (!done && firstAcceptAt === 0) {
      if (slowAskedAt === 0 && slow.matched > 0) slowAskedAt = Date.now();
      if (await accepts()) firstAcceptAt = Date.now();
      else await new Promise((r) => setTimeout(r, 20));
    }
    const gw = await starting;
    recordGatewaySeed(config);
    try {
      expect(slowAskedAt).toBeGreaterThan(0);
      // Served only once the slow network got its answer (the barrier), not when the test network was ready.
      if (firstAcceptAt > 0) expect(firstAcceptAt - slowAskedAt).toBeGreaterThanOrEqual(2_900);
      expect(await accepts()).toBe(true);
    } finally {
      await gw.close();
      slow.close();
      await node.stop();
    }
  }, 30_000);

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
    // The port is taken at the start's first step (the held ports), before any node starts; none is left.
    expect(pids.filter(isAlive)).toEqual([]);
  });
});
