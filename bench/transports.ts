// `npm run bench:transports [bundle]`: the gateway's CPU per call of one locally answered method over each
// transport that carries it (JSON-RPC over HTTP/1.1, Connect JSON over HTTP/1.1, Connect proto and gRPC over
// h2c), 32 at once, against one build (default: a fresh `npm run build`'s dist/main.mjs). What each wire costs
// on top of the same handler; the median of three rounds of 8,000 calls.
import { execSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startEmbeddedNode } from "../src/chain/embeddedNode.js";
import { fixedLoad } from "./fixedLoad.js";

const PORT = 8870;
const CALLS = 8_000;
const CLOCK_TICKS = 100;

/** The process's user+system CPU so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** `n` calls of `call`, 32 at a time. */
const closedLoop =
  (call: () => Promise<unknown>) =>
  async (n: number): Promise<void> => {
    let left = n;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (left-- > 0) await call();
      }),
    );
  };

async function main(): Promise<void> {
  let bundle = process.argv[2];
  if (!bundle) {
    execSync("npm run build --silent", { stdio: "inherit" });
    bundle = "dist/main.mjs";
  }
  const node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
  const proc = spawn(process.execPath, [resolve(bundle)], {
    env: {
      ...process.env,
      NETWORKS: "testnet",
      TESTNET_PORT: String(PORT),
      TESTNET_UPSTREAMS: node.url,
      LOG_LEVEL: "error",
      DATA_DIR: mkdtempSync(join(tmpdir(), "bench-transports-")),
      RATE_LIMIT: "1000000000",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const base = `http://127.0.0.1:${PORT}`;
    for (let i = 0; ; i++) {
      try {
        await fixedLoad(PORT, "/", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', 1, 1);
        break;
      } catch (err) {
        if (i > 300) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const grpc = createClient(RpcService, createGrpcTransport({ baseUrl: base }));
    const connectH1 = createClient(RpcService, createConnectTransport({ baseUrl: base, httpVersion: "1.1" }));
    const connectH2 = createClient(RpcService, createConnectTransport({ baseUrl: base, httpVersion: "2", useBinaryFormat: true }));
    const loads: [string, (n: number) => Promise<void>][] = [
      ["JSON-RPC `eth_chainId`, HTTP/1.1", (n) => fixedLoad(PORT, "/", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', n, 32)],
      ["Connect JSON `GetChainId`, HTTP/1.1", closedLoop(() => connectH1.getChainId({}))],
      ["Connect proto `GetChainId`, h2c", closedLoop(() => connectH2.getChainId({}))],
      ["gRPC `GetChainId`, h2c", closedLoop(() => grpc.getChainId({}))],
    ];
    for (const [, load] of loads) await load(2_000);
    console.log(`Node ${process.version}; ${CALLS} calls, 32 at once, median of 3 rounds\n`);
    console.log("| transport | gateway CPU µs per call |\n|---|---|");
    for (const [name, load] of loads) {
      const perCall: number[] = [];
      for (let round = 0; round < 3; round++) {
        const before = cpuMs(proc.pid!);
        await load(CALLS);
        perCall.push(((cpuMs(proc.pid!) - before) * 1000) / CALLS);
      }
      console.log(`| ${name} | ${perCall.sort((a, b) => a - b)[1]!.toFixed(1)} |`);
    }
  } finally {
    proc.kill("SIGKILL");
    await node.stop();
  }
}

await main();
