// Fan-out of live heads (#32): N WebSocket subscribers to newHeads on one server. For each block, the
// spread from the first subscriber receiving it to the last one (the server's fan-out), p50/p99 over the
// blocks seen; and the server's RSS per idle subscriber. Run against the gateway and against anvil's own
// WebSocket, side by side, with two kinds of subscriber: `ws` clients in this one process (their own reading
// is in the figure too), and bench/wsSubscribers.c's, read in one C epoll loop (close to the server alone).
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";

export interface FanoutRow {
  target: string;
  /** Who the subscribers are: "Node.js (ws)" or "C (epoll)". */
  client: string;
  subscribers: number;
  blocks: number;
  p50Ms: number;
  p99Ms: number;
  /** Bytes of server RSS per connected, subscribed socket (the ws rows only: see fanoutFromC). */
  rssPerSubscriber: number | undefined;
}

const ownRss = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
/** The server's RSS: its own and its fan-out shards' (the gateway's child processes that hold sockets). */
function rssBytes(pid: number): number {
  let shards: number[] = [];
  try {
    shards = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes("wsShard"))
      .map((l) => Number.parseInt(l, 10));
  } catch {
    // ps exits 1 when the server has no children
  }
  return ownRss(pid) + shards.reduce((sum, p) => sum + ownRss(p), 0);
}
/** Nearest rank, as bench/cbench.h: p99 of 120 blocks is the second slowest, of 32 the slowest. */
const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)]!;

export async function fanout(target: string, wsUrl: string, serverPid: number, subscribers: number, seconds: number): Promise<FanoutRow> {
  const rssBefore = rssBytes(serverPid);
  const sockets: WebSocket[] = [];
  /** Per block number: first and last arrival (ms), and how many arrived. */
  const arrivals = new Map<string, { first: number; last: number; n: number }>();
  let subscribed = 0;
  const open = async (): Promise<void> => {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
    sockets.push(ws);
    ws.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    await new Promise<void>((resolve) => {
      ws.on("message", (data) => {
        const text = String(data);
        if (text.includes('"eth_subscription"')) {
          const number = /"number":"(0x[0-9a-f]+)"/.exec(text)?.[1] ?? "?";
          const now = performance.now();
          const a = arrivals.get(number);
          if (a) {
            a.last = now;
            a.n++;
          } else arrivals.set(number, { first: now, last: now, n: 1 });
        } else {
          subscribed++;
          resolve();
        }
      });
      ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    });
  };
  // Opened in waves: a burst of 10,000 handshakes at once is a connect storm, not what is measured here.
  for (let i = 0; i < subscribers; i += 200) await Promise.all(Array.from({ length: Math.min(200, subscribers - i) }, open));
  const rssAfter = rssBytes(serverPid);
  const startAt = arrivals.size;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  // Only blocks every subscriber got, counted after all were subscribed.
  const spreads = [...arrivals.values()]
    .slice(startAt)
    .filter((a) => a.n === subscribers)
    .map((a) => a.last - a.first);
  for (const ws of sockets) ws.terminate();
  await new Promise((r) => setTimeout(r, 500));
  return {
    target,
    client: "Node.js (ws)",
    subscribers: subscribed,
    blocks: spreads.length,
    p50Ms: spreads.length ? Math.round(percentile(spreads, 50) * 10) / 10 : Number.NaN,
    p99Ms: spreads.length ? Math.round(percentile(spreads, 99) * 10) / 10 : Number.NaN,
    rssPerSubscriber: Math.round((rssAfter - rssBefore) / Math.max(1, subscribed)),
  };
}

/** bench/wsSubscribers.c compiled with the system's C compiler, or undefined where there is none. */
export function buildWsSubscribers(dir: string): string | undefined {
  const binary = join(dir, "wsSubscribers");
  try {
    execFileSync("cc", ["-O2", "-o", binary, "bench/wsSubscribers.c"], { stdio: "ignore" });
    return binary;
  } catch {
    return undefined;
  }
}

/**
 * The same spread with bench/wsSubscribers.c's subscribers. No RSS figure: these run after the ws rows on the
 * same server, whose heap already grew for as many sockets and is reused.
 */
export async function fanoutFromC(binary: string, target: string, wsUrl: string, subscribers: number, seconds: number): Promise<FanoutRow> {
  const url = new URL(wsUrl);
  const child = spawn(binary, [String(subscribers), url.port, url.pathname, String(seconds)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => void (out += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  await new Promise((r) => setTimeout(r, 500));
  const line = out.split("\n").find((l) => l.startsWith("{"));
  if (code !== 0 || !line) throw new Error(`wsSubscribers against ${target} exited ${code}`);
  const r = JSON.parse(line) as { blocks: number; spreadP50: number; spreadP99: number };
  return {
    target,
    client: "C (epoll)",
    subscribers,
    blocks: r.blocks,
    p50Ms: r.spreadP50,
    p99Ms: r.spreadP99,
    rssPerSubscriber: undefined,
  };
}
