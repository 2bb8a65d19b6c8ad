// JSON-RPC over WebSocket with eth_subscribe (#32), as users call it: viem's webSocket transport, ethers'
// WebSocketProvider, and a plain `ws` client for the edges (limits, refusals, shutdown), against the
// embedded chain.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { Contract, JsonRpcProvider, Wallet, WebSocketProvider } from "ethers";
import { createPublicClient, erc20Abi, webSocket } from "viem";
import WebSocket from "ws";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

/** anvil's first dev account: it deployed the demo token and holds its supply. */
const DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ERC20 = ["function transfer(address to, uint256 amount) returns (bool)", "event Transfer(address indexed from, address indexed to, uint256 value)"];

/** A plain client: sends requests, collects every message. */
async function open(
  url: string,
): Promise<{ ws: WebSocket; messages: unknown[]; call: (body: unknown) => Promise<unknown>; closed: Promise<{ code: number; reason: string }> }> {
  const ws = new WebSocket(url);
  const messages: unknown[] = [];
  const waiters = new Map<unknown, (v: unknown) => void>();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { id?: unknown } | { id?: unknown }[];
    messages.push(msg);
    const id = Array.isArray(msg) ? msg[0]?.id : msg.id;
    waiters.get(id)?.(msg);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let next = 1000;
  const call = (body: unknown): Promise<unknown> => {
    const b = body as { id?: unknown } | { id?: unknown }[];
    const id = Array.isArray(b) ? b[0]?.id : (b.id ?? next++);
    return new Promise((resolve) => {
      waiters.set(id, resolve);
      ws.send(JSON.stringify(Array.isArray(b) ? b : { jsonrpc: "2.0", id, ...b }));
    });
  };
  return { ws, messages, call, closed };
}

/** The HTTP status an upgrade is refused with. */
function refusedWith(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => reject(new Error("opened")));
    ws.on("error", () => undefined);
  });
}

/** Live subscriptions the gateway holds, wherever their sockets are (its gauge). */
async function liveSubscriptions(http: string): Promise<number> {
  const text = await (await fetch(`${http}/metrics`)).text();
  return [...text.matchAll(/^gateway_subscriptions\{[^}]*network="testnet"[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/** Every test runs with the sockets in the gateway's process, and again with all of them on fan-out shards. */
const untilAsync = async (check: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.each([
  { where: "in the gateway's process", shards: 0, socketsInProcess: 1_000 },
  { where: "on fan-out shards", shards: 2, socketsInProcess: 0 },
])("JSON-RPC over WebSocket, sockets $where", ({ shards, socketsInProcess }) => {
  let gw: Gateway;
  let http: string;
  let wsUrl: string;
  let keyedWs: string;
  let token: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.websocket.maxSubscriptionsPerSocket = 3;
        c.websocket.maxSocketsPerCaller = 4;
        c.websocket.maxBufferedBytes = 1024 * 1024;
        c.websocket.shards = shards;
        c.websocket.socketsInProcess = socketsInProcess;
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    http = gw.network("testnet").url;
    wsUrl = http.replace("http://", "ws://");
    const { apiKey } = (await postJson(`${http}/portal/keys`, { label: "ws" })).json as { apiKey: string };
    keyedWs = `${wsUrl}/zgt/${apiKey}`;
    token = ((await postJson(http, { jsonrpc: "2.0", id: 1, method: "platform_getSupportedTokens", params: [] })).json as { result: { value: string[] } })
      .result.value[0]!;
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** A Transfer of the demo token, signed by the dev account, sent on the keyed HTTP endpoint. */
  async function transfer(to: string): Promise<void> {
    const { apiKey } = (await postJson(`${http}/portal/keys`, { label: "sender" })).json as { apiKey: string };
    const provider = new JsonRpcProvider(`${http}/zgt/${apiKey}`, undefined, { staticNetwork: true, pollingInterval: 100 });
    const tx = await (
      new Contract(token, ERC20, new Wallet(DEV_KEY, provider)) as unknown as { transfer(to: string, v: bigint): Promise<{ wait(): Promise<unknown> }> }
    ).transfer(to, 7n);
    await tx.wait();
    provider.destroy();
  }

  it("viem webSocket(): plain calls, and watchBlocks sees consecutive blocks, each once", async () => {
    const client = createPublicClient({ transport: webSocket(wsUrl) });
    expect(await client.getChainId()).toBe(20180427);
    const seen: bigint[] = [];
    const unwatch = client.watchBlocks({ onBlock: (b) => void seen.push(b.number) });
    await until(() => seen.length >= 5);
    unwatch();
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBe(seen[i - 1]! + 1n);
    await client.transport.getRpcClient().then((c) => c.close());
  });

  it("viem watchContractEvent and ethers contract.on get the Transfer log; ethers on('block') counts up", async () => {
    const viem = createPublicClient({ transport: webSocket(wsUrl) });
    const viemLogs: { args: { to?: string; value?: bigint } }[] = [];
    const unwatch = viem.watchContractEvent({
      address: token as `0x${string}`,
      abi: erc20Abi,
      eventName: "Transfer",
      onLogs: (logs) => void viemLogs.push(...logs),
    });
    const provider = new WebSocketProvider(wsUrl);
    const blocks: number[] = [];
    await provider.on("block", (n: number) => void blocks.push(n));
    const ethersLogs: unknown[][] = [];
    await new Contract(token, ERC20, provider).on("Transfer", (...args: unknown[]) => void ethersLogs.push(args));
    // Both subscriptions are live once the gateway holds them.
    await untilAsync(async () => (await liveSubscriptions(http)) >= 3);
    const to = Wallet.createRandom().address;
    await transfer(to);
    await until(() => viemLogs.length > 0 && ethersLogs.length > 0 && blocks.length >= 3);
    expect(viemLogs[0]!.args).toMatchObject({ to, value: 7n });
    expect(ethersLogs[0]!.slice(1, 3)).toEqual([to, 7n]);
    for (let i = 1; i < blocks.length; i++) expect(blocks[i]).toBe(blocks[i - 1]! + 1);
    unwatch();
    await provider.destroy();
    await viem.transport.getRpcClient().then((c) => c.close());
  });

  it("geth's shapes: newHeads is a header, logs filter by address and topic, eth_unsubscribe ends it", async () => {
    const c = await open(wsUrl);
    onTestFinished(() => c.ws.close());
    const sub = (await c.call({ method: "eth_subscribe", params: ["newHeads"] })) as { result: string };
    expect(sub.result).toMatch(/^0x[0-9a-f]{32}$/);
    await until(() => c.messages.some((m) => (m as { method?: string }).method === "eth_subscription"));
    const note = c.messages.find((m) => (m as { method?: string }).method === "eth_subscription") as {
      params: { subscription: string; result: Record<string, unknown> };
    };
    expect(note.params.subscription).toBe(sub.result);
    expect(note.params.result).toHaveProperty("parentHash");
    expect(note.params.result).toHaveProperty("hash");
    expect(note.params.result).not.toHaveProperty("transactions");
    expect(await c.call({ method: "eth_unsubscribe", params: [sub.result] })).toMatchObject({ result: true });
    expect(await c.call({ method: "eth_unsubscribe", params: [sub.result] })).toMatchObject({ result: false });
    // A logs filter for another address sees nothing of the transfer; one for the token and Transfer does.
    const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
    const other = (await c.call({ method: "eth_subscribe", params: ["logs", { address: "0x000000000000000000000000000000000000dEaD" }] })) as {
      result: string;
    };
    const mine = (await c.call({ method: "eth_subscribe", params: ["logs", { address: [token], topics: [transferTopic] }] })) as { result: string };
    await transfer(Wallet.createRandom().address);
    const logsOf = (id: string) => c.messages.filter((m) => (m as { params?: { subscription?: string } }).params?.subscription === id);
    await until(() => logsOf(mine.result).length > 0);
    expect((logsOf(mine.result)[0] as { params: { result: { address: string; removed: boolean } } }).params.result).toMatchObject({
      address: token.toLowerCase(),
      removed: false,
    });
    expect(logsOf(other.result)).toEqual([]);
    // Ordinary calls and batches work on the same socket, with exact ids.
    expect(
      await c.call([
        { jsonrpc: "2.0", id: "a", method: "eth_chainId", params: [] },
        { jsonrpc: "2.0", id: "b", method: "net_version", params: [] },
      ]),
    ).toEqual([
      { jsonrpc: "2.0", id: "a", result: "0x133edcb" },
      { jsonrpc: "2.0", id: "b", result: "20180427" },
    ]);
    c.ws.close();
  });

  it("refusals are specific: bad type, public pending transactions, too many subscriptions, bad key, unknown path, writes on /", async () => {
    const c = await open(wsUrl);
    onTestFinished(() => c.ws.close());
    expect(await c.call({ method: "eth_subscribe", params: ["syncing2"] })).toMatchObject({ error: { code: -32602 } });
    // -32003 as eth_newPendingTransactionFilter answers it (#68): -32001 means an unknown or revoked key.
    expect(await c.call({ method: "eth_subscribe", params: ["newPendingTransactions"] })).toMatchObject({ error: { code: -32003 } });
    expect(await c.call({ method: "eth_subscribe", params: ["logs", { topics: ["0x12"] }] })).toMatchObject({ error: { code: -32602 } });
    expect(await c.call({ method: "eth_sendRawTransaction", params: ["0x00"] })).toMatchObject({ error: { code: -32003 } });
    for (let i = 0; i < 3; i++) expect(await c.call({ method: "eth_subscribe", params: ["newHeads"] })).toHaveProperty("result");
    expect(await c.call({ method: "eth_subscribe", params: ["newHeads"] })).toMatchObject({ error: { code: -32005 } });
    c.ws.close();
    const keyed = await open(keyedWs);
    expect(await keyed.call({ method: "eth_subscribe", params: ["newPendingTransactions"] })).toHaveProperty("result");
    keyed.ws.close();
    expect(await refusedWith(`${wsUrl}/zgt/cgw_not-a-key`)).toBe(401);
    expect(await refusedWith(`${wsUrl}/nope`)).toBe(404);
  });

  it("sockets per caller are bounded (429); a frame over the body limit closes the socket (1009)", async () => {
    // A caller of its own (a fresh key), so other tests' sockets do not count.
    const { apiKey } = (await postJson(`${http}/portal/keys`, { label: "ws-limit" })).json as { apiKey: string };
    const mine = `${wsUrl}/zgt/${apiKey}`;
    const held = await Promise.all(Array.from({ length: 4 }, () => open(mine)));
    expect(await refusedWith(mine)).toBe(429);
    held[0]!.ws.close();
    await held[0]!.closed;
    const deadline = Date.now() + 5_000;
    let again: Awaited<ReturnType<typeof open>> | undefined;
    while (!again && Date.now() < deadline) again = await open(mine).catch(() => undefined);
    if (!again) throw new Error("a closed socket's place was not freed");
    again.ws.send("x".repeat(1024 * 1024 + 1));
    expect((await again.closed).code).toBe(1009);
    for (const h of held.slice(1)) h.ws.close();
  });

  it("a reorg is told as geth tells it: the dropped block's logs again with removed: true, then the new branch's heads", async () => {
    const c = await open(wsUrl);
    onTestFinished(() => c.ws.close());
    const heads = (await c.call({ method: "eth_subscribe", params: ["newHeads"] })) as { result: string };
    const logs = (await c.call({ method: "eth_subscribe", params: ["logs", { address: token }] })) as { result: string };
    const of = (id: string) =>
      c.messages
        .filter((m) => (m as { params?: { subscription?: string } }).params?.subscription === id)
        .map((m) => (m as { params: { result: Record<string, unknown> } }).params.result);
    await transfer(Wallet.createRandom().address);
    await until(() => of(logs.result).length === 1);
    const mined = Number.parseInt(String(of(logs.result)[0]!.blockNumber), 16);
    // anvil_reorg: the node drops its last blocks (the transfer's among them) and mines new ones instead.
    // A block mined between reading the head and the reorg would leave the depth one short and the transfer's
    // block in place: then it is done again, deeper, until that block is replaced.
    const pool = gw.network("testnet").pool;
    const minedHash = of(logs.result)[0]!.blockHash;
    for (let extra = 0; ; extra += 2) {
      const head = Number.parseInt(String(await pool.call("eth_blockNumber", [])), 16);
      await pool.call("anvil_reorg", [Math.min(head, head - mined + 1 + extra), []]);
      const now = (await pool.call("eth_getBlockByNumber", [`0x${mined.toString(16)}`, false])) as { hash: string } | null;
      if (now?.hash !== minedHash || extra >= 6) break;
    }
    // The dropped log comes again with removed: true. (anvil may put the dropped transfer back in its pool and
    // mine it again on the new branch: its log then arrives in the same pass, so "exactly two logs" was a race.)
    await until(() => of(logs.result).some((l) => l.removed === true));
    expect(of(logs.result)[1]).toMatchObject({
      removed: true,
      blockNumber: of(logs.result)[0]!.blockNumber,
      transactionHash: of(logs.result)[0]!.transactionHash,
    });
    // After the reorg the heads go on from the fork point: the replaced numbers come again, with new hashes.
    await until(() => of(heads.result).some((h, i) => i > 0 && Number(h.number) <= Number(of(heads.result)[i - 1]!.number)));
    const numbers = of(heads.result).map((h) => Number(h.number));
    const back = numbers.findIndex((n, i) => i > 0 && n <= numbers[i - 1]!);
    expect(numbers[back]).toBeLessThanOrEqual(mined);
    // The fork point may lie before this subscriber's first head (a deeper retry above): compare the new
    // branch's block at the transfer's height with the block the log named, which this subscriber did see.
    const again = () => of(heads.result).find((h, i) => i >= back && Number(h.number) === mined);
    await until(() => again() !== undefined);
    expect(again()!.hash).not.toBe(minedHash);
  });

  it("a consumer that stops reading is closed with 1008 once its unread answers pass the bound", { timeout: 60_000 }, async () => {
    const c = await open(wsUrl);
    c.ws.pause(); // reads nothing from now on
    // Each batch's answer is ~150 KB (40 copies of Multicall3's code); kernel buffers fill, then the socket's own.
    const multicall = "0xcA11bde05977b3631167028862bE2a173976CA11";
    const batch = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_getCode", params: [multicall, "latest"] })));
    // Paused, this client cannot see the close: the gateway's counter says when it came. Reading resumes then,
    // well within the 5 s the gateway gives a closed consumer to take its backlog and the close frame (a loaded
    // machine that kept sending for seconds more got 1006, the gateway's terminate).
    const closedByGateway = async () =>
      /gateway_websocket_slow_consumer_closes_total\{network="testnet",share="socket"\} 1/.test(await (await fetch(`${http}/metrics`)).text());
    for (let i = 0; i < 300 && c.ws.readyState === WebSocket.OPEN; i++) {
      c.ws.send(batch);
      await new Promise((r) => setTimeout(r, 5));
      if (i % 10 === 9 && (await closedByGateway())) break;
    }
    c.ws.resume();
    const { code, reason } = await c.closed;
    expect(code).toBe(1008);
    expect(reason).toMatch(/slow consumer/);
    const metrics = await (await fetch(`${http}/metrics`)).text();
    expect(metrics).toMatch(/gateway_websocket_slow_consumer_closes_total\{network="testnet",share="socket"\} 1/);
  });

  it("nothing is polled while nobody subscribes", async () => {
    await until(() => gw.network("testnet").feed.listenerCount === 0);
    expect(await liveSubscriptions(http)).toBe(0);
  });
});
