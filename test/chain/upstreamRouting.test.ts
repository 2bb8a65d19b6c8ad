// Upstream routing under faults (#33), with three real anvils of one network (the same genesis: the same
// chain id and genesis timestamp) behind one gateway: the first is killed mid-load (kill -9), the second made
// to lag (its mining paused) and later caught up, the third made slow by a delaying TCP proxy. Under a steady
// mixed read load no client request fails and no client sees its block number go backwards; the caught-up
// node is used again; a transaction sent while the first is down is mined, its receipt readable at once.
// (Each anvil mines its own blocks, so they agree on the genesis and on numbers, not on block hashes; the
// assertions hold for nodes of one real chain as well.)
import { execFileSync } from "node:child_process";
import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Wallet } from "ethers";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";

const GENESIS_TIME = ["--timestamp", "1700000000"];

/** A TCP proxy that holds every chunk from the node for `delayMs` before passing it on. */
async function slowProxy(target: string, delayMs: number): Promise<{ url: string; close(): void }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const node = net.connect(Number(port), hostname);
    sockets.add(client).add(node);
    client.on("data", (d) => node.write(d));
    node.on("data", (d) => setTimeout(() => client.writable && client.write(d), delayMs));
    const end = (): void => {
      client.destroy();
      node.destroy();
    };
    client.on("close", end).on("error", end);
    node.on("close", end).on("error", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe("upstream routing with three real nodes", () => {
  const nodes: EmbeddedNode[] = [];
  let counted: FaultyUpstream | undefined;
  let slow: { url: string; close(): void } | undefined;
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    counted?.close();
    slow?.close();
    for (const n of nodes) await n.stop().catch(() => undefined);
  });

  it("a killed node, a lagging node and a slow node: no client request fails, block numbers never go back", { timeout: 120_000 }, async () => {
    for (let i = 0; i < 3; i++) nodes.push(await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero", extraArgs: GENESIS_TIME }));
    const [first, second, third] = nodes as [EmbeddedNode, EmbeddedNode, EmbeddedNode];
    counted = await startFaultyUpstream(second.url); // counts what reaches the second node
    slow = await slowProxy(third.url, 50);
    const upstreams = [first.url, counted.url, slow.url];
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = upstreams;
        c.upstreamTimeoutMs = 1_500;
        c.upstreamProbeIntervalMs = 250;
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    const url = gw.network("testnet").url;

    // Steady mixed reads from 6 clients, each checking its own block numbers never go back.
    let stop = false;
    const failures: string[] = [];
    const backwards: string[] = [];
    let requests = 0;
    const client = async (c: number): Promise<void> => {
      let last = -1;
      const methods: [string, unknown[]][] = [
        ["eth_blockNumber", []],
        ["eth_getBalance", ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "latest"]],
        ["eth_chainId", []],
        ["eth_getBlockByNumber", ["latest", false]],
      ];
      for (let i = 0; !stop; i++) {
        const [method, params] = methods[i % methods.length]!;
        const res = await postJson(url, { jsonrpc: "2.0", id: i, method, params }).catch((err: unknown) => ({ status: 0, json: undefined, text: String(err) }));
        requests++;
        const body = res.json as { result?: unknown; error?: unknown } | undefined;
        if (res.status !== 200 || !body || body.error !== undefined) {
          failures.push(`client ${c} ${method}: ${res.status} ${res.text.slice(0, 200)}`);
          continue;
        }
        if (method === "eth_blockNumber") {
          const n = Number.parseInt(String(body.result), 16);
          if (n < last) backwards.push(`client ${c}: ${last} then ${n}`);
          last = n;
        }
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, (_, c) => client(c)));
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await pause(1_500);

    // kill -9 of the first node (anvil itself, not its watchdog).
    const anvilPid = Number(execFileSync("pgrep", ["-P", String(first.pid), "-x", "anvil"], { encoding: "utf8" }).trim());
    process.kill(anvilPid, "SIGKILL");
    await pause(1_000);

    // A transaction sent while the first is down: mined, and its receipt readable at once, every time.
    const { apiKey } = (await postJson(`${url}/portal/keys`, { label: "routing" })).json as { apiKey: string };
    const provider = new JsonRpcProvider(`${url}/zgt/${apiKey}`, undefined, { staticNetwork: true, pollingInterval: 100 });
    const tx = await new Wallet("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", provider).sendTransaction({
      to: Wallet.createRandom().address,
      value: 1n,
    });
    await tx.wait();
    for (let i = 0; i < 10; i++) expect(await provider.send("eth_getTransactionReceipt", [tx.hash]), `read ${i}`).not.toBeNull();
    provider.destroy();

    // The second node lags (mining paused), then catches up (mines past the best): it is used again.
    await rpc(second.url, "evm_setIntervalMining", [0]);
    await pause(1_500);
    const lagging = counted.calls;
    await pause(1_000);
    const whileLagging = counted.calls - lagging;
    const best = Number.parseInt(String(await rpc(third.url, "eth_blockNumber")), 16);
    const own = Number.parseInt(String(await rpc(second.url, "eth_blockNumber")), 16);
    await rpc(second.url, "anvil_mine", [`0x${(best - own + 4).toString(16)}`]);
    await rpc(second.url, "evm_setIntervalMining", [1]);
    await pause(1_000);
    const caughtUp = counted.calls;
    await pause(1_000);
    const afterCatchUp = counted.calls - caughtUp;
    stop = true;
    await load;

    expect(failures).toEqual([]);
    expect(backwards).toEqual([]);
    expect(requests).toBeGreaterThan(200);
    // While behind, the second got little more than probes; caught up, it serves reads again.
    expect(afterCatchUp).toBeGreaterThan(whileLagging * 2);
    expect(afterCatchUp).toBeGreaterThan(20);
    // Every decision is visible.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/gateway_upstream_lag_blocks\{/);
    expect(metrics).toMatch(/gateway_upstream_circuit_open\{network="testnet",upstream="http:\/\/127\.0\.0\.1:\d+"\} 1/);
  });
});
