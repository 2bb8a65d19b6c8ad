// A subscriber across an upstream failover (#32): two real anvils of one chain behind the gateway, the
// first stopped mid-stream. The second is made a replica of the first (anvil_loadState of its dump: the same
// blocks and hashes) while the first's mining is paused, then takes over mining; the first is then killed.
// The WebSocket newHeads subscriber must see every block number exactly once, in order, across the switch.
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import WebSocket from "ws";
import { anvilBinaryPath, startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { rpc, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
describe("live heads across an upstream failover", () => {
  let first: EmbeddedNode | undefined;
  let second: ChildProcess | undefined;
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await first?.stop();
    second?.kill("SIGKILL");
  });

  it("two anvils, the first stopped mid-stream: every block number exactly once, in order", { timeout: 60_000 }, async () => {
    first = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    const port = await freePort();
    const secondUrl = `http://127.0.0.1:${port}`;
    const firstNode = first;
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [firstNode.url, secondUrl];
        c.upstreamTimeoutMs = 1_000;
      },
    });
    const ws = new WebSocket(gw.network("testnet").url.replace("http://", "ws://"));
    const numbers: number[] = [];
    const hashes: string[] = [];
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as { method?: string; params?: { result: { number: string; hash: string } } };
      if (msg.method !== "eth_subscription") return;
      numbers.push(Number(msg.params!.result.number));
      hashes.push(msg.params!.result.hash);
    });
    await new Promise((r) => ws.once("open", r));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    await until(() => numbers.length >= 5, 15_000);

    // The second starts only now: an idle anvil has a genesis of its own, and had it answered the gateway's
    // genesis read at start, the first would have been taken out as another chain (this test flaked so).
    second = spawn(anvilBinaryPath(), ["--port", String(port), "--chain-id", "20180427", "--no-mining", "--gas-price", "0", "--base-fee", "0", "--quiet"], {
      stdio: "ignore",
    });
    for (let i = 0; ; i++) {
      if (
        await rpc(secondUrl, "eth_chainId", []).then(
          () => true,
          () => false,
        )
      )
        break;
      if (i > 200) throw new Error("the second anvil did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
    // The second becomes a replica of the first (same blocks, same hashes), then mines on from its head.
    await rpc(firstNode.url, "evm_setIntervalMining", [0]);
    await new Promise((r) => setTimeout(r, 300));
    await rpc(secondUrl, "anvil_loadState", [await rpc(firstNode.url, "anvil_dumpState")]);
    await rpc(secondUrl, "evm_setIntervalMining", [1]);
    const before = numbers.length;
    await firstNode.stop();
    first = undefined;
    await until(() => numbers.length >= before + 4, 30_000);
    ws.close();

    for (let i = 1; i < numbers.length; i++) expect(numbers[i], `after ${numbers[i - 1]}: ${numbers.join(",")}`).toBe(numbers[i - 1]! + 1);
    expect(new Set(hashes).size).toBe(hashes.length);
    // The stream really crossed over: heads mined by the second node after the first was gone.
    expect(numbers.length).toBeGreaterThanOrEqual(before + 4);
  });
});
