// eth_getLogs within bounds (#54): with LOGS_MAX_BLOCK_RANGE=5 a query (or a log filter) over 20 blocks is refused with -32602
// naming the limit, over HTTP, WebSocket and Connect, before any node is asked; one over 5 blocks is answered,
// complete and in order, even by a node that caps ranges at 3 blocks (the gateway asks it for the halves); an
// answer of more logs than LOGS_MAX_RESULTS is refused the same way.
import { type ChildProcess, execFile } from "node:child_process";
import { promisify } from "node:util";
import { fromJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcErrorSchema, RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";

/** Deploys a contract whose code is PUSH1 0 PUSH1 0 LOG0 STOP: every call logs. */
const LOGGER_INIT = "0x6006600c60003960066000f3" + "60006000a000";
const hex = (n: number) => `0x${n.toString(16)}`;

const run = promisify(execFile);

describe("bounded eth_getLogs", () => {
  let anvil: ChildProcess;
  let node: string;
  let capped: FaultyUpstream;
  let gw: Gateway;
  let url: string;
  /** The blocks holding a log, in order. */
  let logBlocks: number[];

  beforeAll(async () => {
    const port = await freePort();
    anvil = await startAnvil(port);
    node = `http://127.0.0.1:${port}`;
    await rpc(node, "anvil_mine", ["0x20"]);
    const [from] = await rpc<string[]>(node, "eth_accounts");
    const receipt = async (hash: string) => {
      for (;;) {
        const r = await rpc<{ contractAddress: string; blockNumber: string } | null>(node, "eth_getTransactionReceipt", [hash]);
        if (r) return r;
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    const logger = (await receipt(await rpc<string>(node, "eth_sendTransaction", [{ from, data: LOGGER_INIT }]))).contractAddress;
    logBlocks = [];
    // One a block: each waits for the one before to be mined.
    for (let i = 0; i < 8; i++) logBlocks.push(Number((await receipt(await rpc<string>(node, "eth_sendTransaction", [{ from, to: logger }]))).blockNumber));
    capped = await startFaultyUpstream(node);
    capped.capLogRange(3);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [capped.url];
        c.logsMaxBlockRange = 5;
      },
    });
    url = gw.network("testnet").url;
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    capped?.close();
    if (anvil) await kill9(anvil);
  });

  const wide = { fromBlock: "0x1", toBlock: "0x14" };
  const refusal = { code: -32602, message: expect.stringMatching(/limit of 5 blocks.*LOGS_MAX_BLOCK_RANGE/), data: { limit: 5, requested: 20 } };

  it("over 20 blocks: -32602 naming the limit over HTTP, and no node is asked", async () => {
    const before = capped.logQueries;
    const res = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_getLogs", params: [wide] });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 1, error: refusal });
    expect(capped.logQueries).toBe(before);
    // A toBlock past the head counts up to the head only; "latest" too.
    const head = Number(await rpc<string>(node, "eth_blockNumber"));
    const pastHead = await postJson(url, { jsonrpc: "2.0", id: 2, method: "eth_getLogs", params: [{ fromBlock: hex(head - 2), toBlock: hex(head + 1_000) }] });
    expect(pastHead.json).toMatchObject({ result: expect.any(Array) });
  });

  it("over 20 blocks: the same refusal over WebSocket and Connect", async () => {
    const ws = new WebSocket(url.replace("http://", "ws://"));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const answer = new Promise<unknown>((resolve) => ws.once("message", (d) => resolve(JSON.parse(String(d)))));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "eth_getLogs", params: [wide] }));
    expect(await answer).toMatchObject({ id: 3, error: refusal });
    ws.close();

    const client = createClient(RpcService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const err = (await client.call({ method: "eth_getLogs", params: fromJson(ListValueSchema, [wide]) }).catch((e: unknown) => e)) as ConnectError;
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(RpcErrorSchema)[0]?.code).toBe(-32602);
    expect(err.rawMessage).toMatch(/limit of 5 blocks/);
  });

  it("cast logs over the cap is answered at once and complete: cast reads -32602 as a range limit and asks in parts", { timeout: 60_000 }, async () => {
    // -32005 (a rate limit to clients) had cast retry for 13 s, "Max retries exceeded", every retry counted.
    const from = logBlocks[0]! - 10;
    const to = logBlocks.at(-1)! + 10;
    const t0 = Date.now();
    const { stdout } = await run("node_modules/.bin/cast", ["logs", "--from-block", String(from), "--to-block", String(to), "--json", "--rpc-url", url], {
      timeout: 30_000,
    });
    const logs = JSON.parse(stdout) as { blockNumber: string }[];
    expect(logs.map((l) => Number(l.blockNumber))).toEqual(logBlocks);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it("over 5 blocks: answered complete and in order by a node that caps ranges at 3", async () => {
    const filter = { fromBlock: hex(logBlocks[0]!), toBlock: hex(logBlocks[0]! + 4) };
    const before = capped.logQueries;
    const res = await postJson(url, { jsonrpc: "2.0", id: 4, method: "eth_getLogs", params: [filter] });
    const direct = await rpc<unknown[]>(node, "eth_getLogs", [filter]);
    expect(direct.length).toBeGreaterThanOrEqual(2);
    expect((res.json as { result: unknown[] }).result).toEqual(direct);
    // Refused whole (5 > 3), then asked in halves of 3 and 2.
    expect(capped.logQueries - before).toBe(3);
  });

  it("a log filter (eth_newFilter) is held to the same range: over 20 blocks -32602, over 5 a filter id", async () => {
    const wideFilter = await postJson(url, { jsonrpc: "2.0", id: 6, method: "eth_newFilter", params: [wide] });
    expect(wideFilter.json).toMatchObject({
      error: { code: -32602, message: expect.stringMatching(/a log filter over 20 blocks/), data: { limit: 5, requested: 20 } },
    });
    const narrow = await postJson(url, {
      jsonrpc: "2.0",
      id: 7,
      method: "eth_newFilter",
      params: [{ fromBlock: hex(logBlocks[0]!), toBlock: hex(logBlocks[0]! + 4) }],
    });
    expect((narrow.json as { result: string }).result).toMatch(/^0x[0-9a-f]+$/);
  });

  it("more logs than LOGS_MAX_RESULTS: -32602 naming that limit", async () => {
    const strict = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [node];
        c.logsMaxResults = 3;
      },
    });
    try {
      const filter = { fromBlock: hex(logBlocks[0]!), toBlock: hex(logBlocks.at(-1)!) };
      const res = await postJson(strict.network("testnet").url, { jsonrpc: "2.0", id: 5, method: "eth_getLogs", params: [filter] });
      expect(res.json).toMatchObject({
        error: { code: -32602, message: expect.stringMatching(/matched 8 logs.*LOGS_MAX_RESULTS/), data: { limit: 3, requested: 8 } },
      });
    } finally {
      await strict.close();
    }
  });
});
