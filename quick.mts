import autocannon from "autocannon";
import { spawn } from "node:child_process";
import { startEmbeddedNode } from "./src/chain/embeddedNode.js";
const node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
const proc = spawn(process.execPath, [...(process.env.PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] : []), "--import", "tsx", "src/main.ts"], { cwd: "/work/main", env: { ...process.env, NETWORKS: "testnet", TESTNET_PORT: "0", TESTNET_UPSTREAMS: node.url, LOG_LEVEL: "error", DATA_DIR: "/tmp/quick-gw", RATE_LIMIT: "1000000000" }, stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise<string>((r) => proc.stdout!.on("data", (d: Buffer) => { const m = /(http:\/\/[\d.:]+)/.exec(String(d)); if (m) r(m[1]!); }));
for (const [name, body] of [["blockNumber", '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'], ["chainId", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'], ["batch40", JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_getBalance", params: ["0x000000000000000000000000000000000000bEEF", "latest"] })))]]) {
  const r = await autocannon({ url: url + "/", method: "POST", headers: { "content-type": "application/json" }, body, connections: 32, duration: 3 });
  console.log(name, Math.round(r.requests.average), "rps p50", r.latency.p50, "p99", r.latency.p99, "err", r.errors + r.non2xx);
}
proc.kill("SIGINT"); await new Promise((r) => setTimeout(r, 1500)); await node.stop(); process.exit(0);
