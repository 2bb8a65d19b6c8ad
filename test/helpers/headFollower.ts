// A client following the head through the gateway (#68), as an indexer or ethers' polling does: what it must
// never see behind a node that lags — the head going back, a block at the head answered null, fewer logs than
// the chain has, or a receipt it has seen turning null. Shared by laggingNode (a proxy playing the lag) and
// lockStepNodes (two real nodes); each returns the problems it saw.
import { rpc } from "./gateway.js";

type Call = <T>(method: string, params: unknown[]) => Promise<T>;

export function gatewayCall(url: string): Call {
  return <T>(method: string, params: unknown[]) => rpc<T>(url, method, params);
}

/** `n` concurrent log readers on the gateway until stop() (load on the nodes; each polls after `gapMs`). */
export function logReaders(call: Call, emitter: string, n: number, gapMs = 0): { stop(): Promise<void> } {
  let loading = true;
  const readers = Array.from({ length: n }, async () => {
    while (loading) {
      const head = Number(await call<string>("eth_blockNumber", []).catch(() => "0x0"));
      await call("eth_getLogs", [{ fromBlock: `0x${Math.max(1, head - 10).toString(16)}`, toBlock: "latest", address: emitter }]).catch(() => undefined);
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    }
  });
  return {
    async stop() {
      loading = false;
      await Promise.all(readers);
    },
  };
}

/**
 * `rounds` of (head, block at head, logs up to head); `truth` is a node of the chain, whose logs are the
 * count to meet. `each` runs after every round (a check of the test's own).
 */
export async function roundsAtHead(call: Call, truth: string, emitter: string, rounds: number, each?: (round: number) => Promise<void>): Promise<string[]> {
  const problems: string[] = [];
  let last = -1;
  for (let round = 0; round < rounds; round++) {
    const head = Number(await call<string>("eth_blockNumber", []));
    if (head < last) problems.push(`round ${round}: head ${head} after ${last}`);
    last = Math.max(last, head);
    const hex = `0x${head.toString(16)}`;
    const block = await call<{ number: string } | null>("eth_getBlockByNumber", [hex, false]);
    if (block === null) problems.push(`round ${round}: block ${head} null`);
    const range = { fromBlock: `0x${Math.max(1, head - 20).toString(16)}`, toBlock: hex, address: emitter };
    const logs = await call<unknown[]>("eth_getLogs", [range]);
    const chain = await rpc<unknown[]>(truth, "eth_getLogs", [range]);
    if (logs.length < chain.length) problems.push(`round ${round}: ${logs.length} logs up to ${head}, the chain has ${chain.length}`);
    await each?.(round);
  }
  return problems;
}

/** Receipts of the newest blocks' first transactions, as the gateway answers them now (seen mined). */
export async function receiptsSeen(call: Call, count: number): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < count; i++) {
    const head = await call<string>("eth_blockNumber", []);
    const block = await call<{ transactions: string[] } | null>("eth_getBlockByNumber", [head, false]);
    const hash = block?.transactions[0];
    if (hash && (await call("eth_getTransactionReceipt", [hash])) !== null) seen.push(hash);
  }
  return seen;
}

/**
 * After a failover (the level node gone): the receipts `seen` never null, and over `rounds` of (head, latest,
 * the last receipts seen), latest and receipts never go back. Adds to `seen` what it meets.
 */
export async function roundsAfterFailover(call: Call, seen: string[], rounds: number): Promise<string[]> {
  const problems: string[] = [];
  let last = -1;
  for (const hash of seen)
    if ((await call("eth_getTransactionReceipt", [hash])) === null) problems.push(`receipt of ${hash} null once the level node was gone`);
  for (let round = 0; round < rounds; round++) {
    const head = Number(await call<string>("eth_blockNumber", []));
    if (head < last) problems.push(`round ${round}: head ${head} after ${last}`);
    last = Math.max(last, head);
    const latest = await call<{ number: string; transactions: string[] } | null>("eth_getBlockByNumber", ["latest", false]).catch((e: Error) => e);
    if (latest instanceof Error || latest === null) problems.push(`round ${round}: latest ${latest instanceof Error ? latest.message : "null"}`);
    else {
      if (Number(latest.number) < last) problems.push(`round ${round}: latest ${Number(latest.number)} after ${last}`);
      last = Math.max(last, Number(latest.number));
      if (latest.transactions[0]) seen.push(latest.transactions[0]);
    }
    for (const hash of seen.slice(-3)) {
      const receipt = await call<{ blockNumber: string } | null>("eth_getTransactionReceipt", [hash]).catch((e: Error) => e);
      if (receipt === null || receipt instanceof Error)
        problems.push(`round ${round}: receipt of ${hash} ${receipt === null ? "null" : receipt.message} after it was seen`);
    }
  }
  return problems;
}
