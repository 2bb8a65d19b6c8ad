// anvil as a process of a test's own (not the gateway's embedded one), for tests that kill it, restart it on an
// older state, or replace it with another chain; and the lookups those tests make of it.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { statSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { anvilBinaryPath } from "../../src/chain/embeddedNode.js";
import type { SubmissionRecord, SubmissionStore } from "../../src/store/submissionStore.js";
import { rpc } from "./gateway.js";

export const CHAIN_ID = 20180427;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * anvil on a fixed port; with `state`, loaded from and dumped to that file every second; with `loadState`,
 * started on a state saved before (saveState). Its genesis hash depends on its start second:
 * `genesisTimestamp` makes two fresh nodes surely differ.
 */
/** `fees: "node"`: anvil's own EIP-1559 fees (a base fee of 1 gwei) instead of a zero-fee chain. */
export async function startAnvil(
  port: number,
  state?: string,
  genesisTimestamp?: number,
  loadState?: string,
  fees: "zero" | "node" = "zero",
): Promise<ChildProcess> {
  const args = [
    ...(genesisTimestamp ? ["--timestamp", String(genesisTimestamp)] : []),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--chain-id",
    String(CHAIN_ID),
    "--block-time",
    "0.25",
    ...(fees === "zero" ? ["--gas-price", "0", "--base-fee", "0"] : []),
    "--quiet",
  ];
  if (state) args.push("--state", state, "--state-interval", "1");
  if (loadState) args.push("--load-state", loadState);
  const child = spawn(anvilBinaryPath(), args, { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await rpc<string>(url, "eth_chainId")) !== undefined) return child;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error("anvil did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves when anvil next writes its state file (each second with --state-interval 1), with that write's time. */
export async function nextDump(state: string): Promise<number> {
  const mtime = () => statSync(state, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const before = mtime();
  for (;;) {
    await new Promise((r) => setTimeout(r, 10));
    const now = mtime();
    if (now !== before) return now;
  }
}

/**
 * One method for many params, asked in JSON-RPC batches of 200, one batch at a time (a batch the node did not
 * answer is asked again, twice; after that its entries are undefined). Thousands of lookups at once, one
 * connection each, overflowed the node's accept queue (11,891 drops in one run): lookups hung or were reset,
 * and the gateway's own reconnects to the node competed with them, so the test measured itself.
 */
export async function batchRpc<T>(url: string, method: string, paramsList: unknown[][]): Promise<(T | undefined)[]> {
  const out: (T | undefined)[] = [];
  for (let at = 0; at < paramsList.length; at += 200) {
    const chunk = paramsList.slice(at, at + 200);
    const body = JSON.stringify(chunk.map((params, id) => ({ jsonrpc: "2.0", id, method, params })));
    let byId = new Map<number, T>();
    for (let attempt = 0; attempt < 3 && byId.size === 0; attempt++) {
      const answers = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then((r) => r.json() as Promise<unknown>)
        .then((a) => (Array.isArray(a) ? (a as { id: number; result?: T }[]) : []))
        .catch(() => []);
      byId = new Map(answers.map((a) => [a.id, a.result as T]));
    }
    out.push(...chunk.map((_, id) => byId.get(id)));
  }
  return out;
}

export async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/**
 * The node's state now (anvil_dumpState: blocks, transactions and accounts as of one instant), written where
 * startAnvil's `loadState` can start a node on it: that node's head is the head of this moment.
 */
export async function saveState(url: string, file: string): Promise<void> {
  const hex = await rpc<string>(url, "anvil_dumpState");
  writeFileSync(file, gunzipSync(Buffer.from(hex.slice(2), "hex")));
}

/**
 * For a failure message: per signer with unmined writes, the node's mined nonce count, the lowest unmined nonce,
 * and what the journal and the node say of the write at the node's next nonce (the one the rest wait behind).
 */
export async function whyUnmined(url: string, unmined: string[], all: (SubmissionRecord | undefined)[]): Promise<string> {
  const lines: string[] = [];
  const ids = new Set(unmined);
  const bySigner = Map.groupBy(
    all.filter((r): r is SubmissionRecord => r !== undefined && ids.has(r.queueId)),
    (r) => r.signer,
  );
  for (const [signer, list] of bySigner) {
    const mined = Number(await rpc<string>(url, "eth_getTransactionCount", [signer, "latest"]));
    const statuses = Object.entries(Object.groupBy(list, (r) => r.status)).map(([s, l]) => `${s} ${l!.length}`);
    const atNext = all.find((r) => r?.signer === signer && r.nonce === mined);
    const onNode = atNext ? await rpc<{ blockNumber: string | null } | null>(url, "eth_getTransactionByHash", [atNext.hash]) : undefined;
    lines.push(
      `${signer}: node mined ${mined}, lowest unmined nonce ${Math.min(...list.map((r) => r.nonce))}, unmined ${statuses.join(", ")}; ` +
        `nonce ${mined} in the journal: ${atNext ? `${atNext.status} ${atNext.queueId}, on the node: ${onNode === null ? "no" : onNode?.blockNumber ? "mined" : "in its pool"}` : "none"}`,
    );
  }
  return `\n${lines.join("\n")}`;
}

/**
 * `f` of every item, at most 100 at a time: thousands of lookups at once open a connection each, past the
 * gateway's per-IP connection share (HTTP_MAX_CONNECTIONS_PER_IP), and a test measures itself.
 */
export async function inBatches<T, U>(items: T[], f: (item: T) => Promise<U>, size = 100): Promise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(f))));
  return out;
}

/**
 * Waits (up to `ms`) until every queueId is completed in the journal with its journaled hash mined on the node;
 * the ones still not, if any.
 */
export async function unminedAfter(store: Pick<SubmissionStore, "get">, node: string, ids: string[], ms = 120_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  let unmined = ids;
  while (unmined.length > 0 && Date.now() < deadline) {
    const recs = await Promise.all(unmined.map((id) => store.get(id)));
    const found = await batchRpc<{ blockNumber: string | null } | null>(
      node,
      "eth_getTransactionByHash",
      recs.map((r) => [r!.hash]),
    );
    unmined = unmined.filter((_, i) => !found[i]?.blockNumber || recs[i]!.status !== "completed");
    if (unmined.length > 0) await new Promise((r) => setTimeout(r, 500));
  }
  return unmined;
}
