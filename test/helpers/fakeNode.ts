// A small JSON-RPC server standing in for a node, for faults anvil cannot be made to show per request: reads
// (eth_getBalance) answered after a delay, probes answered slowly, a node that says it is syncing. It answers
// the pool's probe calls (chain id, genesis, head, eth_syncing) and eth_getBalance with "0x7".
import http from "node:http";
import type { AddressInfo } from "node:net";
import { UpstreamPool, type UpstreamPoolOptions } from "../../src/chain/upstreamPool.js";
import { createLogger } from "../../src/log/logger.js";

export const FAKE_CHAIN_ID = 20180427;
const PROBE_METHODS = new Set(["eth_chainId", "eth_getBlockByNumber", "eth_syncing"]);

interface Call {
  id: number;
  method: string;
  params?: unknown[];
}

export interface FakeNodeOptions {
  chainId: number;
  /** eth_getBalance is answered after this long. */
  readDelayMs?: number;
  /** Everything else (the probes) is answered after this long. */
  probeDelayMs?: number;
  /** What eth_syncing answers at first (default false). */
  syncing?: FakeNode["syncing"];
  /** Answers every batch with one error object, as some providers do. */
  refuseBatches?: boolean;
  /** Writes a single eth_getBalance's answer itself (a hostile one: huge, dripped...) instead of "0x7". */
  hostileRead?: (res: http.ServerResponse) => void;
}

export interface FakeNode {
  url: string;
  /** What eth_syncing answers (false: synced). */
  syncing: false | { startingBlock: string; currentBlock: string; highestBlock: string };
  /** Answers every batch with one error object (as some providers do) while true. */
  refuseBatches: boolean;
  /** While true, requests other than the probes get no answer; set false, the held ones are answered. */
  hold: boolean;
  /** eth_getBalance requests answered, and those whose connection closed before they were. */
  readonly reads: number;
  readonly abandoned: number;
  /** The methods of each request other than the probes, in arrival order (a batch lists several). */
  readonly requests: string[][];
  close(): void;
}

export async function startFakeNode(options: FakeNodeOptions): Promise<FakeNode> {
  const state = { reads: 0, abandoned: 0, requests: [] as string[][] };
  let held: (() => void)[] | undefined;
  const node: FakeNode = {
    url: "",
    syncing: options.syncing ?? false,
    refuseBatches: options.refuseBatches ?? false,
    get hold() {
      return held !== undefined;
    },
    set hold(on: boolean) {
      if (on) held ??= [];
      else {
        const waiting = held ?? [];
        held = undefined;
        for (const reply of waiting) reply();
      }
    },
    get reads() {
      return state.reads;
    },
    get abandoned() {
      return state.abandoned;
    },
    get requests() {
      return state.requests;
    },
    close: () => server.close(),
  };
  const result = (method: string): unknown =>
    method === "eth_chainId"
      ? "0x" + options.chainId.toString(16)
      : method === "eth_getBlockByNumber"
        ? { hash: "0x" + "ab".repeat(32), number: "0x0" }
        : method === "eth_blockNumber"
          ? "0x10"
          : method === "eth_syncing"
            ? node.syncing
            : "0x7";
  const server = http.createServer(async (req, res) => {
    let text = "";
    for await (const c of req) text += String(c);
    const body = JSON.parse(text) as Call | Call[];
    const calls = Array.isArray(body) ? body : [body];
    if (!calls.some((c) => PROBE_METHODS.has(c.method))) state.requests.push(calls.map((c) => c.method));
    if (Array.isArray(body) && node.refuseBatches) {
      res.setHeader("content-type", "application/json").end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported"}}');
      return;
    }
    // An address ending in dead has no balance to give: a per-call error, beside others' results in a batch.
    // One ending in 0404 is "not found" as EIP-1474 codes it (-32001), as some nodes answer.
    const answer = (c: Call) =>
      c.method === "eth_getBalance" && String(c.params?.[0]).endsWith("dead")
        ? { jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "no balance for dead" } }
        : c.method === "eth_getBalance" && String(c.params?.[0]).endsWith("0404")
          ? { jsonrpc: "2.0", id: c.id, error: { code: -32001, message: "Resource not found" } }
          : { jsonrpc: "2.0", id: c.id, result: result(c.method) };
    const isRead = !Array.isArray(body) && body.method === "eth_getBalance";
    const reply = () => {
      if (res.destroyed) return;
      if (isRead) state.reads++;
      res.setHeader("content-type", "application/json").end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    };
    if (isRead && options.hostileRead) return options.hostileRead(res);
    const probe = calls.some((c) => PROBE_METHODS.has(c.method));
    const timer = setTimeout(() => (held && !probe ? held.push(reply) : reply()), (isRead ? options.readDelayMs : options.probeDelayMs) ?? 0);
    res.on("close", () => {
      if (!res.writableFinished) {
        clearTimeout(timer);
        if (isRead) state.abandoned++;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return node;
}

/**
 * Two fake nodes behind a started UpstreamPool. The first answers probes at once and the second 150 ms later,
 * so the pool asks the first one first, whatever the machine's load. `close` stops the pool and both nodes.
 */
export async function twoNodePool(
  first: Partial<FakeNodeOptions>,
  second: Partial<FakeNodeOptions>,
  options: Pick<UpstreamPoolOptions, "timeoutMs"> & Partial<UpstreamPoolOptions>,
): Promise<{ pool: UpstreamPool; first: FakeNode; second: FakeNode; close(): void }> {
  const a = await startFakeNode({ chainId: FAKE_CHAIN_ID, ...first });
  const b = await startFakeNode({ chainId: FAKE_CHAIN_ID, probeDelayMs: 150, ...second });
  const pool = new UpstreamPool({ urls: [a.url, b.url], chainId: FAKE_CHAIN_ID, probeIntervalMs: 60_000, log: createLogger("error"), ...options });
  await pool.start();
  return {
    pool,
    first: a,
    second: b,
    close() {
      pool.stop();
      a.close();
      b.close();
    },
  };
}
