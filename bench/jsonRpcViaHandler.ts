// `npm run bench:via-handler`: the CPU of one JSON-RPC call by three ways, side by side in one process, same
// core and answers: RpcCore alone (no policy: the floor), POST /'s way (the envelope, then the guarded
// RpcService.Call handler in process with params and result as JSON text), and the Call handler with
// params and result as google.protobuf.Value (a Connect client's shape). Measured for a locally answered call
// and a large result (a block with 200 transactions, as eth_getBlockByNumber(n, true) returns).
import type { SubscriptionHub } from "../src/live/subscriptions.js";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { RpcCore } from "../src/rpc/rpcCore.js";
import { UpstreamPool } from "../src/chain/upstreamPool.js";
import { RateLimits } from "../src/limits/rateLimits.js";
import { createLogger } from "../src/log/logger.js";
import { Policy } from "../src/policy/policy.js";
import { guard } from "../src/handlers/guard.js";
import { edgeAdmission } from "../src/handlers/admission.js";
import { rpcHandlers } from "../src/handlers/rpcHandlers.js";
import { handleJsonRpc } from "../src/transport/jsonrpc/handleJsonRpc.js";
import { jsonRpcViaHandlers } from "../src/transport/jsonrpc/viaHandlers.js";
import { callInProcess } from "../src/transport/http/callInProcess.js";
import { RpcService, CallRequestSchema } from "../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { IdempotencyStore } from "../src/store/idempotencyStore.js";
import type { Sponsorship } from "../src/platform/sponsorship.js";
import type { JsonValue } from "../src/errors.js";

const log = createLogger("error");
const pool = new UpstreamPool({ urls: ["http://127.0.0.1:9"], chainId: 20180427, timeoutMs: 1000, probeIntervalMs: 60_000, log });
const limits = new RateLimits({ requestsPerWindow: 1e12, windowMs: 60_000, tryItOutRequestsPerWindow: 1e12, failMode: "open", decisionTimeoutMs: 1000 }, log);
const core = new RpcCore(pool, 20180427);
const tx = (i: number): JsonValue => ({
  hash: "0x" + i.toString(16).padStart(64, "0"),
  from: "0x" + "a".repeat(40),
  to: "0x" + "b".repeat(40),
  input: "0x" + "cd".repeat(68),
  nonce: "0x" + i.toString(16),
  gas: "0x5208",
  gasPrice: "0x0",
  value: "0x0",
  v: "0x1",
  r: "0x" + "1".repeat(64),
  s: "0x" + "2".repeat(64),
  blockNumber: "0x10",
  transactionIndex: "0x" + i.toString(16),
  type: "0x0",
  chainId: "0x133edcb",
});
const block: JsonValue = {
  number: "0x10",
  hash: "0x" + "3".repeat(64),
  parentHash: "0x" + "4".repeat(64),
  timestamp: "0x6500",
  gasLimit: "0x1c9c380",
  gasUsed: "0x41a0",
  baseFeePerGas: "0x0",
  transactions: Array.from({ length: 200 }, (_, i) => tx(i)),
};
core.register("bench_block", async () => block);
const policy = new Policy({
  network: "testnet",
  authenticate: async () => ({ kind: "public" }),
  limits,
  idempotency: undefined as unknown as IdempotencyStore,
});
const rpc = guard(RpcService, rpcHandlers(core, 40, undefined as unknown as Sponsorship, undefined as unknown as SubscriptionHub), policy);
const admission = edgeAdmission(policy);

/** The floor: the core alone, no policy, no handler (what POST / cost before it ran on the handlers). */
async function coreAlone(body: string): Promise<string> {
  const req = JSON.parse(body) as { id: number; method: string; params: JsonValue[] };
  const [o] = await core.callMany({ access: { kind: "public" } }, [{ method: req.method, params: req.params }]);
  if (!o?.ok) throw new Error("failed");
  return `{"jsonrpc":"2.0","id":${req.id},"result":${o.raw ?? JSON.stringify(o.result)}}`;
}

/** POST / today: the envelope, then the guarded Call handler in process, params and result as JSON text. */
async function jsonText(body: string): Promise<string> {
  const answer = await handleJsonRpc(body, jsonRpcViaHandlers(rpc, { clientIp: "127.0.0.1" }, "/", admission), 40);
  return answer.body ?? "";
}

/** The Call handler with params and result as google.protobuf.Value (a Connect client's shape). */
async function asValues(body: string): Promise<string> {
  const req = JSON.parse(body) as { id: number; method: string; params?: JsonValue[] };
  const call = callInProcess(
    RpcService.method.call,
    rpc.call,
    create(CallRequestSchema, { method: req.method, params: fromJson(ListValueSchema, req.params ?? []) }),
    { clientIp: "127.0.0.1" },
    "/",
  );
  const res = await call.result;
  return `{"jsonrpc":"2.0","id":${req.id},"result":${JSON.stringify(res.result ? toJson(ValueSchema, res.result) : null)}}`;
}

async function nsPer(n: number, f: (i: number) => Promise<string>): Promise<number> {
  let sink = 0;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += (await f(i)).length;
  if (sink < 0) console.log(sink);
  return Number(process.hrtime.bigint() - t) / n;
}

const cases: [string, string, number][] = [
  ["eth_chainId (answered locally)", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', 200_000],
  ["a block with 200 transactions (~140 KB)", '{"jsonrpc":"2.0","id":1,"method":"bench_block","params":["0x10",true]}', 2_000],
];
for (const [, body] of cases) {
  const [a, b, c] = [await coreAlone(body), await jsonText(body), await asValues(body)];
  if (a !== b || JSON.stringify(JSON.parse(a)) !== JSON.stringify(JSON.parse(c))) throw new Error("the paths answer differently");
}
console.log("| call | RpcCore alone, no policy (µs) | POST /: Call handler, JSON text (µs) | Call handler, Values (µs) |\n|---|---|---|---|");
for (const [name, body, n] of cases) {
  const rounds: [number, number, number][] = [];
  for (let r = 0; r < 5; r++) rounds.push([await nsPer(n, () => coreAlone(body)), await nsPer(n, () => jsonText(body)), await nsPer(n, () => asValues(body))]);
  // The first round warms the JIT; the median of the rest is reported.
  const kept = rounds.slice(1);
  const med = (k: 0 | 1 | 2): number => kept.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(kept.length / 2)]! / 1000;
  console.log(`| ${name} | ${med(0).toFixed(2)} | ${med(1).toFixed(2)} | ${med(2).toFixed(2)} |`);
}
process.exit(0);
