// `npm run bench:transports [bundle ...]`: the gateway's CPU per call of one locally answered method over
// each transport that carries it (JSON-RPC over HTTP/1.1, Connect JSON over HTTP/1.1, Connect proto and gRPC
// over h2c), 32 at once (default bundle: a fresh `npm run build`'s dist/main.mjs). What each wire costs on
// top of the same handler. Several bundles are an A/B: each on its own port, rounds alternating between
// them (TRANSPORT_ROUNDS, default 5, of 8,000 calls), the median per bundle.
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startNodeFlags } from "../scripts/nodeFlags.js";
import { startEmbeddedNode } from "../src/chain/embeddedNode.js";
import { fixedLoad } from "./fixedLoad.js";
import { cpuMs } from "./processCpu.js";

const PORT = 8870;
const CALLS = 8_000;
const ROUNDS = Number(process.env.TRANSPORT_ROUNDS ?? 5);
const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';

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

type Load = [name: string, run: (n: number) => Promise<void>];

/** The four wires' loads against the gateway on `port`. */
function loadsAt(port: number): Load[] {
  const base = `http://127.0.0.1:${port}`;
  const grpc = createClient(RpcService, createGrpcTransport({ baseUrl: base }));
  const connectH1 = createClient(RpcService, createConnectTransport({ baseUrl: base, httpVersion: "1.1" }));
  const connectH2 = createClient(RpcService, createConnectTransport({ baseUrl: base, httpVersion: "2", useBinaryFormat: true }));
  return [
    ["JSON-RPC `eth_chainId`, HTTP/1.1", (n) => fixedLoad(port, "/", CHAIN_ID, n, 32)],
    ["Connect JSON `GetChainId`, HTTP/1.1", closedLoop(() => connectH1.getChainId({}))],
    ["Connect proto `GetChainId`, h2c", closedLoop(() => connectH2.getChainId({}))],
    ["gRPC `GetChainId`, h2c", closedLoop(() => grpc.getChainId({}))],
  ];
}

async function started(bundle: string, upstream: string, port: number): Promise<ChildProcess> {
  // As npm start runs it (its Node flags).
  const proc = spawn(process.execPath, [...startNodeFlags(), resolve(bundle)], {
    env: {
      ...process.env,
      NETWORKS: "testnet",
      TESTNET_PORT: String(port),
      TESTNET_UPSTREAMS: upstream,
      LOG_LEVEL: "error",
      DATA_DIR: mkdtempSync(join(tmpdir(), "bench-transports-")),
      RATE_LIMIT: "1000000000",
      // The h2 loads open 8,000 streams a round from one IP: past the default 5,000 in 10 s it is a flood (GOAWAY).
      HTTP2_STREAMS_PER_IP_PER_10S: "1000000000",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (let i = 0; ; i++) {
    try {
      await fixedLoad(port, "/", CHAIN_ID, 1, 1);
      return proc;
    } catch (err) {
      if (i > 300) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function main(): Promise<void> {
  const bundles = process.argv.slice(2);
  if (bundles.length === 0) {
    execSync("npm run build --silent", { stdio: "inherit" });
    bundles.push("dist/main.mjs");
  }
  const node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
  const procs: ChildProcess[] = [];
  try {
    for (const [i, b] of bundles.entries()) procs.push(await started(b, node.url, PORT + i));
    const loads = bundles.map((_, i) => loadsAt(PORT + i));
    for (const l of loads) for (const [, load] of l) await load(2_000);
    const perCall = bundles.map(() => loads[0]!.map(() => [] as number[]));
    for (let round = 0; round < ROUNDS; round++)
      for (const [li] of loads[0]!.entries()) {
        const order = bundles.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          const before = cpuMs(procs[i]!.pid!);
          await loads[i]![li]![1](CALLS);
          perCall[i]![li]!.push(((cpuMs(procs[i]!.pid!) - before) * 1000) / CALLS);
        }
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`Node ${process.version}; ${CALLS} calls, 32 at once, median of ${ROUNDS} alternating rounds\n`);
    console.log(`| transport | ${bundles.map((b) => `${b} CPU µs per call`).join(" | ")} |\n|---|${bundles.map(() => "---").join("|")}|`);
    for (const [li, [name]] of loads[0]!.entries()) console.log(`| ${name} | ${perCall.map((p) => median(p[li]!).toFixed(1)).join(" | ")} |`);
  } finally {
    for (const p of procs) p.kill("SIGKILL");
    await node.stop();
  }
}

await main();
