// Memory a burst leaves goes back (#62): 50 WebSockets from 5 addresses, 100 newHeads subscriptions each,
// never read, closed by the per-address share (counted) and then by their clients. The gateway runs as its
// own process, as an operator runs it, and its RSS is read from /proc. Its garbage (the closed sockets'
// unsent frames, their native buffers) is not something V8 sees grow, so without a collection nothing freed
// it and RSS stayed +25 % (116 -> 143-146 MB here); a collection when RSS stands a burst over its least
// (memory/trimFreed.ts) brings it back.
import { readFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";
import { until } from "../helpers/until.js";

const ADDRESSES = ["127.0.0.51", "127.0.0.52", "127.0.0.53", "127.0.0.54", "127.0.0.55"];
const MB = 2 ** 20;

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function slowReader(url: string, localAddress: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { localAddress });
  ws.on("error", () => undefined);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  for (const n of [40, 40, 20]) {
    const answered = new Promise((resolve) => ws.once("message", resolve));
    ws.send(JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_subscribe", params: ["newHeads"] }))));
    await answered;
  }
  (ws as unknown as { _socket: Socket })._socket.pause();
  return ws;
}

describe("memory after a burst, the gateway as a process", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGatewayProcess(
      {
        DATA_DIR: mkdtempSync(join(tmpdir(), "gw-burst-")),
        LOG_LEVEL: "info",
        WS_SHARDS: "0",
        WS_MAX_BUFFERED_BYTES_PER_IP: String(MB),
        // Every second rather than every 10: the same work, sooner.
        MEMORY_TRIM_MS: "1000",
      },
      "bundle",
    );
  });
  afterAll(async () => {
    gw?.child.kill();
    await gw?.exited;
  });

  it("WebSocket slow readers from 5 addresses: RSS growth < 100 MB, back within 20 % of its settled start", { timeout: 120_000 }, async () => {
    const pid = gw.child.pid!;
    // Settled: the least over 5 s, once the start's own garbage had 10 s to go.
    await sleep(10_000);
    let before = rssOf(pid);
    for (let i = 0; i < 10; i++) {
      await sleep(500);
      before = Math.min(before, rssOf(pid));
    }
    const wsUrl = gw.url.replace("http", "ws");
    let peak = before;
    const sample = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 200);
    const sockets = await Promise.all(ADDRESSES.flatMap((ip) => Array.from({ length: 10 }, () => slowReader(wsUrl, ip))));
    const closes = async () =>
      Number(
        /gateway_websocket_slow_consumer_closes_total\{network="testnet",share="address"\} (\d+)/.exec(await (await fetch(`${gw.url}/metrics`)).text())?.[1] ??
          0,
      );
    // The defence fired: each address passed its share and lost its slowest sockets.
    await until(async () => (await closes()) >= ADDRESSES.length, 60_000);
    await sleep(2_000);
    clearInterval(sample);
    for (const ws of sockets) ws.terminate();
    let after = rssOf(pid);
    await until(() => (after = rssOf(pid)) < 1.2 * before, 30_000).catch(() => undefined);
    const report = `RSS ${Math.round(before / MB)} MB settled, peak ${Math.round(peak / MB)}, ${Math.round(after / MB)} after; ${await closes()} sockets closed by the share`;
    console.log(report);
    expect(peak - before, report).toBeLessThan(100 * MB);
    expect(after, report).toBeLessThan(1.2 * before);
  });
});
