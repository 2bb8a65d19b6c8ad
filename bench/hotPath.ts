// `npm run bench:hotpath`: the gateway's own CPU per locally answered JSON-RPC call, without sockets. The
// router, JSON-RPC handling, rate limiter, metrics and response serializer are wired as src/network.ts wires
// them and called in a loop, so their cost is measured apart from the kernel's (see the socket-floor table in
// bench/RESULTS.md). Bundled and run as plain JavaScript, like the gateway.
import { StoreHealth } from "../src/store/storeHealth.js";
import { RpcCore } from "../src/rpc/rpcCore.js";
import { UpstreamPool } from "../src/chain/upstreamPool.js";
import { RateLimits } from "../src/limits/rateLimits.js";
import { jsonRpcRoutes } from "../src/transport/jsonrpc/jsonRpcRoutes.js";
import { createRestRouter, type HttpAnswer } from "../src/transport/http/restRouter.js";
import { healthRoutes } from "../src/transport/http/healthRoutes.js";
import { serialize } from "../src/transport/http/fastLane.js";
import { Metrics } from "../src/metrics/metrics.js";
import { ImmutableCache } from "../src/rpc/immutableCache.js";
import { InflightReads } from "../src/rpc/inflightReads.js";
import { createLogger } from "../src/log/logger.js";
import type { IdempotencyStore } from "../src/store/idempotencyStore.js";
import { Policy } from "../src/policy/policy.js";
import { RpcService } from "../gen/chaingateway/rpc/v1/rpc_pb.js";
import { guard } from "../src/handlers/guard.js";
import { edgeAdmission } from "../src/handlers/admission.js";
import { rpcHandlers } from "../src/handlers/rpcHandlers.js";
import type { Sponsorship } from "../src/platform/sponsorship.js";
import type { SubscriptionHub } from "../src/live/subscriptions.js";

const CALLS = 2_000_000;
const ROUNDS = 5;
const log = createLogger("error");
const metrics = new Metrics();
// Never contacted: eth_chainId is answered locally.
const pool = new UpstreamPool({ urls: ["http://127.0.0.1:9"], chainId: 20180427, timeoutMs: 1000, probeIntervalMs: 60_000, log });
const limits = new RateLimits({ requestsPerWindow: 1e9, windowMs: 60_000, tryItOutRequestsPerWindow: 1e9, failMode: "open", decisionTimeoutMs: 1000 }, log);
const core = new RpcCore(
  pool,
  20180427,
  async () => undefined,
  new ImmutableCache({ maxEntries: 10_000, confirmations: 2 }),
  (method, outcome) => metrics.countRpc("testnet", outcome.ok ? method : "other", outcome.ok ? "ok" : "error"),
  new InflightReads(),
);
const unused = (): never => {
  throw new Error("not reached by POST /");
};
const policy = new Policy({ network: "testnet", authenticate: unused, limits, idempotency: undefined as unknown as IdempotencyStore });
const router = createRestRouter(
  [
    ...healthRoutes(pool, new StoreHealth(async () => undefined), () => false),
    ...jsonRpcRoutes({
      maxBatchSize: 40,
      bodyBytesPerRequest: 65_536,
      rpc: guard(RpcService, rpcHandlers(core, 40, undefined as unknown as Sponsorship, undefined as unknown as SubscriptionHub), policy),
      admission: edgeAdmission(policy),
    }),
  ],
  1 << 20,
  log,
  new Set(),
  (route, status) => metrics.countHttp("testnet", route, status),
);
const headers = Object.freeze({ host: "127.0.0.1:8545", "content-type": "application/json", "content-length": "59" });
// Ids vary as a real client's do.
const bodies = Array.from({ length: 1024 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"eth_chainId","params":[]}`);
const call = (text: string): Promise<HttpAnswer> | HttpAnswer =>
  router.handle({ method: "POST", url: "/", path: "/", headers, remoteAddress: "127.0.0.1", bytes: () => Promise.resolve(Buffer.from(text)), text });
const sample = await call(bodies[0]!);
if (sample.status !== 200 || !sample.body?.includes('"result":"0x133edcb"')) throw new Error(`unexpected answer: ${sample.status} ${sample.body}`);

const nsPer = async (f: (i: number) => number | Promise<number>): Promise<number> => {
  let sink = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) sink += await f(i);
  if (sink < 0) console.log(sink);
  return Number(process.hrtime.bigint() - t) / CALLS;
};
const rows: [number, number, number][] = [];
for (let round = 0; round < ROUNDS; round++) {
  const parse = await nsPer((i) => (JSON.parse(bodies[i & 1023]!) as { id: number }).id);
  const handle = await nsPer(async (i) => (await call(bodies[i & 1023]!)).body!.length);
  const write = await nsPer(() => serialize(sample, 65_000).length);
  rows.push([parse, handle, write]);
}
// The first round warms the JIT; the rest are reported.
const kept = rows.slice(1);
const median = (k: number): number => kept.map((r) => r[k]!).sort((a, b) => a - b)[Math.floor(kept.length / 2)]!;
console.log(`${CALLS} eth_chainId calls a round, ${ROUNDS - 1} rounds after a warm-up, median ns per call`);
console.log(
  `  router + JSON-RPC + Call handler + limits + metrics (handle): ${median(1).toFixed(0)} ns, of which JSON.parse of the body alone: ${median(0).toFixed(0)} ns`,
);
console.log(`  response serialization: ${median(2).toFixed(0)} ns`);
process.exit(0);
