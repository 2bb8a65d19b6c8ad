// Filters the gateway owns (#55 item 1). Behind two nodes, a filter made on one node was polled on the other:
// "filter not found". Two real anvils of one chain, as in failover.test.ts: the second is made a replica of the
// first (anvil_loadState of its dump) and mines on after the first is killed. Block, log and pending filters made
// through the gateway before the switch must report every block and matching log exactly once across it.
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { Wallet, zeroPadValue, toBeHex } from "ethers";
import { anvilBinaryPath, startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";
import { DEV_KEY, deployEmitter, devSender, EMITTER } from "../helpers/emitter.js";

type Log = { blockNumber: string; blockHash: string; transactionHash: string; logIndex: string; removed?: boolean; topics: string[] };

async function call<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await postJson(url, { jsonrpc: "2.0", id: 1, method, params });
  const body = res.json as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw Object.assign(new Error(`${method}: ${body.error.message}`), { code: body.error.code });
  return body.result as T;
}

// The stopped node is the first of the gateway's upstreams in one run and the second in the other: either node.
describe.each(["first", "second"] as const)("filters the gateway owns (the %s upstream stopped)", (stopped) => {
  let first: EmbeddedNode | undefined;
  let second: ChildProcess | undefined;
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await first?.stop();
    second?.kill("SIGKILL");
  });

  it("block, log and pending filters report every block and log exactly once across a switch of nodes; uninstall works", { timeout: 90_000 }, async () => {
    first = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    const port = await freePort();
    const secondUrl = `http://127.0.0.1:${port}`;
    const firstNode = first;
    gw = await startTestGateway({
      mutate: (c) => {
        // "first": the node that is killed is the first upstream listed; "second": the second.
        c.networks[0]!.upstreams = stopped === "first" ? [firstNode.url, secondUrl] : [secondUrl, firstNode.url];
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 200;
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    const url = gw.network("testnet").url;
    const { apiKey } = await gw.keys.create();
    const keyed = `${url}/zgt/${apiKey}`;

    // The emitter, deployed on the first node.
    const wallet = new Wallet(DEV_KEY);
    let nonce = Number(await rpc<string>(firstNode.url, "eth_getTransactionCount", [wallet.address, "latest"]));
    const send = async (node: string, tx: { to?: string; data: string }): Promise<string> => {
      const raw = await wallet.signTransaction({ chainId: 20180427, nonce: nonce++, gasLimit: 200_000, gasPrice: 0, ...tx });
      return rpc<string>(node, "eth_sendRawTransaction", [raw]);
    };
    const deployHash = await send(firstNode.url, { data: EMITTER });
    let emitter = "";
    await until(async () => {
      const receipt = await rpc<{ contractAddress: string } | null>(firstNode.url, "eth_getTransactionReceipt", [deployHash]);
      emitter = receipt?.contractAddress ?? "";
      return emitter !== "";
    });

    const blockFilter = await call<string>(url, "eth_newBlockFilter", []);
    const logFilter = await call<string>(url, "eth_newFilter", [{ address: emitter }]);
    const pendingFilter = await call<string>(keyed, "eth_newPendingTransactionFilter", []);
    const createdAt = Number(await rpc<string>(firstNode.url, "eth_blockNumber", []));
    const blocks: string[] = [];
    const logs: Log[] = [];
    const pending: string[] = [];
    const poll = async (): Promise<void> => {
      blocks.push(...(await call<string[]>(url, "eth_getFilterChanges", [blockFilter])));
      logs.push(...(await call<Log[]>(url, "eth_getFilterChanges", [logFilter])));
      pending.push(...(await call<string[]>(keyed, "eth_getFilterChanges", [pendingFilter])));
    };
    const emitted: string[] = [];
    for (let i = 0; i < 6; i++) {
      emitted.push(await send(firstNode.url, { to: emitter, data: zeroPadValue(toBeHex(i + 1), 32) }));
      await new Promise((r) => setTimeout(r, 150));
      await poll();
    }

    // The second node becomes a replica of the first, mines on, and the first is killed.
    second = spawn(anvilBinaryPath(), ["--port", String(port), "--chain-id", "20180427", "--no-mining", "--gas-price", "0", "--base-fee", "0", "--quiet"], {
      stdio: "ignore",
    });
    await until(() =>
      rpc(secondUrl, "eth_chainId", []).then(
        () => true,
        () => false,
      ),
    );
    await rpc(firstNode.url, "evm_setIntervalMining", [0]);
    await new Promise((r) => setTimeout(r, 300));
    await rpc(secondUrl, "anvil_loadState", [await rpc(firstNode.url, "anvil_dumpState")]);
    await rpc(secondUrl, "evm_setIntervalMining", [1]);
    await firstNode.stop();
    first = undefined;
    nonce = Number(await rpc<string>(secondUrl, "eth_getTransactionCount", [wallet.address, "pending"]));
    for (let i = 6; i < 10; i++) {
      emitted.push(await send(secondUrl, { to: emitter, data: zeroPadValue(toBeHex(i + 1), 32) }));
      await new Promise((r) => setTimeout(r, 300));
      await poll();
    }
    // Until the last emitted log's block has been reported.
    const lastBlock = async () =>
      Number((await rpc<{ blockNumber: string } | null>(secondUrl, "eth_getTransactionReceipt", [emitted.at(-1)]))?.blockNumber ?? Number.MAX_SAFE_INTEGER);
    await until(async () => {
      await poll();
      return logs.length >= emitted.length && blocks.length > 0 && (await lastBlock()) <= createdAt + blocks.length;
    }, 30_000);
    await poll();

    // Every block once, in order, each the chain's (the second node holds the whole chain).
    expect(new Set(blocks).size).toBe(blocks.length);
    const chain = await Promise.all(blocks.map((h) => rpc<{ number: string; parentHash: string } | null>(secondUrl, "eth_getBlockByHash", [h, false])));
    const numbers = chain.map((b) => Number(b?.number));
    expect(numbers[0]).toBe(createdAt + 1);
    for (let i = 1; i < numbers.length; i++) expect(numbers[i], `after ${numbers[i - 1]}`).toBe(numbers[i - 1]! + 1);
    // Every matching log once (none removed: one chain throughout), and only the emitter's.
    const added = logs.filter((l) => !l.removed);
    expect(added.map((l) => l.transactionHash).sort()).toEqual([...emitted].sort());
    expect(new Set(added.map((l) => `${l.blockHash}:${l.logIndex}`)).size).toBe(added.length);
    // Pending hashes: never one twice.
    expect(new Set(pending).size).toBe(pending.length);

    // Uninstalled from anywhere (the public path, a key's): gone for every caller.
    expect(await call<boolean>(keyed, "eth_uninstallFilter", [blockFilter])).toBe(true);
    expect(await call<boolean>(url, "eth_uninstallFilter", [blockFilter])).toBe(false);
    await expect(call(url, "eth_getFilterChanges", [blockFilter])).rejects.toMatchObject({ code: -32000, message: /filter not found/ });
    expect(await call<boolean>(url, "eth_uninstallFilter", [logFilter])).toBe(true);
    expect(await call<boolean>(url, "eth_uninstallFilter", [pendingFilter])).toBe(true);
  });
});

describe("filters behind two nodes with filter tables of their own", () => {
  const children: ChildProcess[] = [];
  const proxies: FaultyUpstream[] = [];
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    for (const p of proxies) p.close();
    await Promise.all(children.map(kill9));
  });

  // Two "nodes" of one chain (proxies of one anvil) that each keep their own filters, as two real nodes do; each
  // is stopped in turn while the filters are polled.
  it("every block and log once across a stop of either node", { timeout: 60_000 }, async () => {
    const port = await freePort();
    children.push(await startAnvil(port));
    const node = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 2; i++) {
      const p = await startFaultyUpstream(node);
      p.ownFilters();
      proxies.push(p);
    }
    const [a, b] = proxies as [FaultyUpstream, FaultyUpstream];
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [a.url, b.url];
        c.networks[0]!.blockTimeSeconds = 0.25;
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 200;
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    const url = gw.network("testnet").url;
    const send = devSender(node);
    const emitter = await deployEmitter(send, node);
    const blockFilter = await call<string>(url, "eth_newBlockFilter", []);
    const logFilter = await call<string>(url, "eth_newFilter", [{ address: emitter }]);
    const createdAt = Number(await rpc<string>(node, "eth_blockNumber", []));
    const blocks: string[] = [];
    const logs: Log[] = [];
    const poll = async () => {
      blocks.push(...(await call<string[]>(url, "eth_getFilterChanges", [blockFilter])));
      logs.push(...(await call<Log[]>(url, "eth_getFilterChanges", [logFilter])));
    };
    const emitted: string[] = [];
    for (const [phase, stopped] of [
      ["both", undefined],
      ["a stopped", a],
      ["b stopped", b],
    ] as const) {
      for (const p of proxies) p.down = p === stopped;
      for (let i = 0; i < 4; i++) {
        emitted.push(await send({ to: emitter, data: zeroPadValue(toBeHex(emitted.length + 1), 32) }));
        await new Promise((r) => setTimeout(r, 200));
        await poll().catch((err: unknown) => {
          throw new Error(`${phase}: ${(err as Error).message}`);
        });
      }
    }
    const lastBlock = async () => Number((await rpc<{ blockNumber: string }>(node, "eth_getTransactionReceipt", [emitted.at(-1)])).blockNumber);
    await until(async () => {
      await poll();
      return logs.length >= emitted.length && createdAt + blocks.length >= (await lastBlock());
    }, 20_000);
    expect(new Set(blocks).size).toBe(blocks.length);
    const numbers = await Promise.all(blocks.map(async (h) => Number((await rpc<{ number: string }>(node, "eth_getBlockByHash", [h, false])).number)));
    expect(numbers).toEqual(numbers.map((_, i) => createdAt + 1 + i));
    expect(logs.map((l) => l.transactionHash)).toEqual(emitted);
    // Uninstalled through whichever node is up.
    expect(await call<boolean>(url, "eth_uninstallFilter", [logFilter])).toBe(true);
  });
});

describe("a log filter across a reorg", () => {
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
  });

  it("reports the dropped block's log again with removed: true", { timeout: 60_000 }, async () => {
    gw = await startTestGateway();
    const url = gw.network("testnet").url;
    const node = gw.network("testnet").upstreamUrls[0]!;
    const pool = gw.network("testnet").pool;
    const send = devSender(node);
    const emitter = await deployEmitter(send, node);
    const filter = await call<string>(url, "eth_newFilter", [{ address: emitter }]);
    const logs: Log[] = [];
    const poll = async () => logs.push(...(await call<Log[]>(url, "eth_getFilterChanges", [filter])));
    await new Promise((r) => setTimeout(r, 500));
    await send({ to: emitter, data: zeroPadValue(toBeHex(7), 32) });
    await until(async () => {
      await poll();
      return logs.length === 1;
    });
    const mined = Number(logs[0]!.blockNumber);
    const minedHash = logs[0]!.blockHash;
    // anvil_reorg drops the last blocks (the log's among them) and mines others (as webSocket.test.ts does).
    for (let extra = 0; ; extra += 2) {
      const head = Number(await pool.call("eth_blockNumber", []));
      await pool.call("anvil_reorg", [Math.min(head, head - mined + 1 + extra), []]);
      const now = (await pool.call("eth_getBlockByNumber", [`0x${mined.toString(16)}`, false])) as { hash: string } | null;
      if (now?.hash !== minedHash || extra >= 6) break;
    }
    await until(async () => {
      await poll();
      return logs.some((l) => l.removed === true);
    });
    expect(logs.find((l) => l.removed === true)).toMatchObject({ transactionHash: logs[0]!.transactionHash, blockHash: minedHash });
  });
});

describe("filter limits", () => {
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
  });

  it("expire when idle, are bounded per caller, and a pending filter needs a key", { timeout: 30_000 }, async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.filterIdleMs = 1_500;
        c.filtersPerCaller = 3;
        c.logsMaxBlockRange = 2;
      },
    });
    const url = gw.network("testnet").url;
    const ids = [
      await call<string>(url, "eth_newBlockFilter", []),
      await call<string>(url, "eth_newBlockFilter", []),
      await call<string>(url, "eth_newFilter", [{}]),
    ];
    await expect(call(url, "eth_newBlockFilter", [])).rejects.toMatchObject({ code: -32005, message: /at most 3 filters/ });
    // Polled, a filter stays; left alone, it goes.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 600));
      await call(url, "eth_getFilterChanges", [ids[0]]);
    }
    await expect(call(url, "eth_getFilterChanges", [ids[1]])).rejects.toMatchObject({ code: -32000, message: /filter not found/ });
    expect(Array.isArray(await call(url, "eth_getFilterChanges", [ids[0]]))).toBe(true);
    // Room again for this caller.
    expect(await call<string>(url, "eth_newBlockFilter", [])).toMatch(/^0x[0-9a-f]{32}$/);
    await expect(call(url, "eth_newPendingTransactionFilter", [])).rejects.toMatchObject({ code: -32003, message: /needs an API key/ });
    // A log filter is held to LOGS_MAX_BLOCK_RANGE when made; eth_getFilterLogs answers its range.
    await expect(call(url, "eth_newFilter", [{ fromBlock: "0x0", toBlock: "latest" }])).rejects.toMatchObject({ code: -32602 });
    expect(await call(url, "eth_getFilterLogs", [await call<string>(url, "eth_newFilter", [{}])])).toEqual([]);
    await expect(call(url, "eth_getFilterLogs", [ids[0]])).rejects.toMatchObject({ message: /needs a log filter/ });
  });
});
