// `npm run bench:ab -- A.mjs B.mjs ...`: wall-clock A/B of gateway bundles (`npm run build` outputs kept
// aside) in one run, against one embedded anvil: requests/s and the gateway's CPU per answer for the proxy
// path (uncoalesced reads, so every request reaches the node) and for ZKT message writes. Rounds alternate
// the bundles, so a machine that slows down mid-run slows each of them alike. Each runs with `npm start`'s
// Node flags; a bundle may add flags after its path, in one argument (`"dist-ab/x.mjs
// --max-semi-space-size=4"`: the later flag wins), so a flag can be an A/B too, and so can an environment
// variable (`"dist-ab/x.mjs MALLOC_MMAP_THRESHOLD_=65536"`). `AB_WEBHOOK=1` registers a webhook endpoint (a
// local receiver answering 200) for the bundle's key, so the keyed ZKT row pays for its deliveries.
// `AB_ONLY=connect,grpc,chainid` runs bench:transports' rows (Connect JSON, Connect proto, gRPC; each opt-in)
// with this bench's fresh starts, rotation and intervals, which bench:transports does not have.
//
// Two copies of one bundle, started once, differ by 5-15 % here for a whole run (each process's own JIT
// and layout), which no number of rounds averages away. `AB_FRESH=1` starts every bundle anew for each
// round, so that difference becomes a round's, and compares bundles by the median of their per-round
// ratios to the first bundle, with a bootstrap 90 % interval: a change is shown when the interval is.
// `AB_GROUPS=base,new,base,new` also compares builds as all their copies, with the copies' A/A control.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../gen/chaingateway/rpc/v1/rpc_pb.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { fixedLoad as sendFixed } from "./fixedLoad.js";
import { cpuMs } from "./processCpu.js";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startNodeFlags } from "../scripts/nodeFlags.js";
import { startEmbeddedNode } from "../src/chain/embeddedNode.js";

const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const REQUESTS = Number(process.env.AB_REQUESTS ?? 20_000);
const WRITES = Number(process.env.AB_WRITES ?? 3_000);
const FRESH = process.env.AB_FRESH === "1";
/**
 * AB_CHUNKS=k: each round's load in k parts, the bundles taking turns part by part, so a second when the
 * machine is slow falls on all of them rather than on whichever one was running.
 */
const CHUNKS = Number(process.env.AB_CHUNKS ?? 1);
/** AB_PIN=1: the gateways on the second core, this load and anvil on the first, so neither takes the other's. */
const PIN = process.env.AB_PIN === "1";
const CONNECTIONS = 32;

interface Load {
  name: string;
  /** The path, or per bundle (its key's). */
  path: string | ((bundle: number) => string);
  body: string;
  count: number;
  /** A load sent by a client library instead of raw POSTs of `body` (the Connect and gRPC wires). */
  run?: (port: number, n: number) => Promise<void>;
  /** Run only when AB_ONLY names it. */
  optIn?: boolean;
}
const batch40 = JSON.stringify(
  Array.from({ length: 40 }, (_, i) => ({
    jsonrpc: "2.0",
    id: i,
    method: "eth_getBalance",
    params: ["0x" + (0xbeef00 + i).toString(16).padStart(40, "0"), "latest"],
  })),
);
/** AB_ONLY=zkt (say): only the loads whose name holds one of these words. */
const ONLY = process.env.AB_ONLY?.split(",").map((w) => w.trim().toLowerCase());
const CHAIN_ID: Load = {
  name: "eth_chainId (answered locally)",
  path: "/",
  body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  count: REQUESTS,
};
const ALL_LOADS: Load[] = [
  CHAIN_ID,
  { name: "eth_blockNumber (proxied)", path: "/", body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}', count: REQUESTS },
  {
    name: "eth_getBalance (proxied)",
    path: "/",
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000beef0","latest"]}',
    count: REQUESTS,
  },
  { name: "batch of 40 eth_getBalance (proxied)", path: "/", body: batch40, count: REQUESTS / 10 },
  { name: "ZKT message write", path: "/zkt/try-it-out", body: '{"arguments":"bench message"}', count: WRITES },
  { name: "ZKT message write, keyed", path: (i) => `/zkt/${keys[i]}`, body: '{"arguments":"bench message"}', count: WRITES },
];
/** `n` calls of `call`, CONNECTIONS at a time. */
async function closedLoop(call: () => Promise<unknown>, n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (left-- > 0) await call();
    }),
  );
}
const clients = new Map<string, ReturnType<typeof createClient<typeof RpcService>>>();
/** One client per port and wire while its gateway runs (stopAll forgets them). */
const clientFor = (port: number, wire: "json" | "proto" | "grpc") => {
  const key = `${port} ${wire}`;
  const baseUrl = `http://127.0.0.1:${port}`;
  if (!clients.has(key))
    clients.set(
      key,
      createClient(
        RpcService,
        wire === "grpc"
          ? createGrpcTransport({ baseUrl })
          : createConnectTransport({ baseUrl, httpVersion: wire === "json" ? "1.1" : "2", useBinaryFormat: wire === "proto" }),
      ),
    );
  return clients.get(key)!;
};
/** bench:transports' wires as rows (AB_ONLY=connect,grpc): one locally answered method behind each. */
const wire = (name: string, w: "json" | "proto" | "grpc"): Load => ({
  name,
  path: "",
  body: "",
  count: REQUESTS / 2,
  run: (port, n) => closedLoop(() => clientFor(port, w).getChainId({}), n),
  optIn: true,
});
ALL_LOADS.push(wire("Connect JSON GetChainId, HTTP/1.1", "json"), wire("Connect proto GetChainId, h2c", "proto"), wire("gRPC GetChainId, h2c", "grpc"));
const LOADS = ALL_LOADS.filter((l) => (ONLY ? ONLY.some((w) => l.name.toLowerCase().includes(w)) : !l.optIn));
/** Each bundle's API key (the keyed row). */
const keys: string[] = [];

/** Exactly `n` requests of a load (see fixedLoad.ts). */
function fixedLoad(port: number, load: Load, n: number): Promise<void> {
  if (load.run) return load.run(port, n);
  return sendFixed(port, typeof load.path === "string" ? load.path : load.path(port - 8800), load.body, n, CONNECTIONS);
}

/** A bundle's key, and (AB_WEBHOOK) its webhook endpoint at `receiver`. */
async function keyFor(port: number, webhook: boolean, receiver: string): Promise<string> {
  const post = async (path: string, body: unknown) =>
    (
      await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    ).json() as Promise<Record<string, string>>;
  const { apiKey } = await post("/portal/keys", {});
  if (webhook) await post(`/zgt/${apiKey}/webhooks`, { url: receiver, events: ["transaction.completed", "transaction.error"] });
  return apiKey!;
}

async function startBundle(bundle: string, upstream: string, port: number): Promise<ChildProcess> {
  const [path, ...words] = bundle.split(/\s+/);
  // NAME=value words are the process's environment (an allocator setting, say), the rest Node flags.
  const env = Object.fromEntries(words.filter((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]));
  const flags = words.filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));
  const argv = [...startNodeFlags(), ...flags, resolve(path!)];
  const proc = spawn(PIN ? "taskset" : process.execPath, PIN ? ["-c", "1", process.execPath, ...argv] : argv, {
    env: {
      ...process.env,
      ...env,
      NETWORKS: "testnet",
      TESTNET_PORT: String(port),
      TESTNET_UPSTREAMS: upstream,
      LOG_LEVEL: "error",
      DATA_DIR: mkdtempSync(join(tmpdir(), "cgw-ab-")),
      RATE_LIMIT: "1000000000",
      TRY_IT_OUT_RATE_LIMIT: "1000000000",
      PORTAL_KEYS_PER_HOUR: "1000",
      RATE_LIMIT_PER_IP: "1000000000",
      COALESCE_READS: "false",
      // The h2 rows open thousands of streams a round from one IP: past the default budget it is a flood (GOAWAY).
      HTTP2_STREAMS_PER_IP_PER_10S: "1000000000",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (let i = 0; i < 300; i++) {
    try {
      await fixedLoad(port, CHAIN_ID, 1);
      return proc;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`${bundle} did not start`);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The median of `xs` and a bootstrap 90 % interval of it (2,000 resamples, a fixed seed: same data, same interval). */
function medianInterval(xs: number[]): [number, number, number] {
  let seed = 0x9e3779b9;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const medians = Array.from({ length: 2_000 }, () => median(xs.map(() => xs[Math.floor(random() * xs.length)]!))).sort((a, b) => a - b);
  return [median(xs), medians[100]!, medians[1_899]!];
}

/**
 * AB_GROUPS=a,b,a,b: a label per bundle, copies of one build sharing a label. Two copies of one build differ by
 * 3-6 % on a row even in 20 rounds here, so a build is compared as all its copies: per round, the geometric mean
 * of its copies over that of the first label's, median and 90 % interval; and, as the A/A control, the first
 * copies of every label over the second copies.
 */
const GROUPS = process.env.AB_GROUPS?.split(",").map((g) => g.trim());

const geometricMean = (xs: number[]): number => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);

function printPooled(bundles: string[], results: { rps: number[]; cpuUs: number[] }[][]): void {
  if (GROUPS!.length !== bundles.length) throw new Error(`AB_GROUPS names ${GROUPS!.length} bundles, not ${bundles.length}`);
  const labels = [...new Set(GROUPS)];
  const members = (label: string) => GROUPS!.flatMap((g, i) => (g === label ? [i] : []));
  const copy = (k: number) => labels.flatMap((l) => members(l).slice(k, k + 1));
  const pooled = (over: number[], under: number[], li: number, of: "rps" | "cpuUs"): string => {
    const ratios = results[0]![li]![of].map(
      (_, r) => geometricMean(over.map((i) => results[i]![li]![of][r]!)) / geometricMean(under.map((i) => results[i]![li]![of][r]!)),
    );
    const [m, low, high] = medianInterval(ratios);
    return `${percent(m)} [${percent(low)}, ${percent(high)}]`;
  };
  const pairs: [string, number[], number[]][] = labels.slice(1).map((l) => [`${l} over ${labels[0]}`, members(l), members(labels[0]!)]);
  if (labels.every((l) => members(l).length >= 2)) pairs.push(["A/A: first copies over second", copy(0), copy(1)]);
  console.log(`\nPooled by AB_GROUPS (every copy of a build, per round): median [90 % interval], req/s then CPU per answer\n`);
  console.log(`| load | ${pairs.map(([name]) => `${name} req/s | CPU`).join(" | ")} |\n|---|${pairs.map(() => "---|---").join("|")}|`);
  for (const [li, l] of LOADS.entries())
    console.log(`| ${l.name} | ${pairs.map(([, over, under]) => `${pooled(over, under, li, "rps")} | ${pooled(over, under, li, "cpuUs")}`).join(" | ")} |`);
}

const percent = (r: number): string => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)} %`;

async function main(): Promise<void> {
  const bundles = process.argv.slice(2).map((b) => b.trim());
  if (bundles.length < 2) throw new Error("usage: npm run bench:ab -- A.mjs B.mjs [...]");
  const node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
  if (PIN) for (const pid of [process.pid, node.pid]) execFileSync("taskset", ["-a", "-p", "-c", "0", String(pid)], { stdio: "ignore" });
  let procs: ChildProcess[] = [];
  const stopAll = () => {
    for (const p of procs) p?.kill("SIGKILL");
    procs = [];
    clients.clear();
  };
  try {
    // Webhook deliveries' receiver: answers 200, counts them.
    let delivered = 0;
    const receiver = createServer((req, res) => {
      req.resume().on("end", () => {
        delivered++;
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const n = bundles.length;
    // Started anew each round, bundle i takes slot (i + round) % n: its port, its turn to start and to go
    // first. Whichever bundle held the first slot for a whole run came out slowest by 4-10 % (two runs here).
    const bundleIn = (slot: number, round: number): number => (FRESH ? (((slot - round) % n) + n) % n : slot);
    const startAll = async (round: number) => {
      for (let slot = 0; slot < n; slot++) {
        const i = bundleIn(slot, round);
        procs[i] = await startBundle(bundles[i]!, node.url, 8800 + slot);
        keys[slot] = await keyFor(8800 + slot, bundles[i]!.includes("AB_WEBHOOK=1"), receiverUrl);
      }
      // Warm every bundle on every load first (JIT, lanes, connections).
      for (let slot = 0; slot < n; slot++) for (const l of LOADS) await fixedLoad(8800 + slot, l, Math.min(l.count, 2_000));
    };
    const results = bundles.map(() => LOADS.map(() => ({ rps: [] as number[], cpuUs: [] as number[] })));
    for (let round = 0; round < ROUNDS; round++) {
      if (FRESH || round === 0) await startAll(round);
      for (const [li, l] of LOADS.entries()) {
        // Alternate which slot goes first, round by round; time and CPU summed over the parts.
        const order = bundles.map((_, slot) => slot);
        if (round % 2 === 1) order.reverse();
        const seconds = bundles.map(() => 0);
        const cpu = bundles.map(() => 0);
        const part = Math.ceil(l.count / CHUNKS);
        for (let c = 0; c < CHUNKS; c++)
          for (const slot of c % 2 === 0 ? order : [...order].reverse()) {
            const i = bundleIn(slot, round);
            const pid = procs[i]!.pid!;
            const cpu0 = cpuMs(pid);
            const t0 = process.hrtime.bigint();
            await fixedLoad(8800 + slot, l, part);
            seconds[i]! += Number(process.hrtime.bigint() - t0) / 1e9;
            cpu[i]! += cpuMs(pid) - cpu0;
          }
        for (const [i] of bundles.entries()) {
          results[i]![li]!.rps.push((part * CHUNKS) / seconds[i]!);
          results[i]![li]!.cpuUs.push((cpu[i]! * 1000) / (part * CHUNKS));
        }
      }
      if (FRESH) stopAll();
    }
    const how = `${FRESH ? "each bundle started anew every round" : "each bundle started once"}${CHUNKS > 1 ? `, ${CHUNKS} parts in turn` : ""}${PIN ? "; gateways on core 1, load and anvil on core 0" : ""}`;
    console.log(`Node ${process.version}; ${ROUNDS} alternating rounds (${how}), median; ${CONNECTIONS} keep-alive connections; reads uncoalesced\n`);
    console.log(`| load | ${bundles.map((b) => `${b.split("/").pop()} req/s | CPU µs/answer`).join(" | ")} |`);
    console.log(`|---|${bundles.map(() => "---|---").join("|")}|`);
    for (const [li, l] of LOADS.entries()) {
      console.log(`| ${l.name} | ${results.map((r) => `${Math.round(median(r[li]!.rps))} | ${median(r[li]!.cpuUs).toFixed(1)}`).join(" | ")} |`);
    }
    // Each bundle against the first, round by round: the median ratio and its 90 % interval.
    console.log(`\nPer-round ratios to ${bundles[0]}: median [90 % interval], req/s then CPU per answer\n`);
    console.log(
      `| load | ${bundles
        .slice(1)
        .map((b) => `${b} req/s | CPU`)
        .join(" | ")} |`,
    );
    console.log(
      `|---|${bundles
        .slice(1)
        .map(() => "---|---")
        .join("|")}|`,
    );
    for (const [li, l] of LOADS.entries()) {
      const cells = bundles.slice(1).map((_, j) => {
        const [a, b] = [results[0]![li]!, results[j + 1]![li]!];
        const [rps, rpsLow, rpsHigh] = medianInterval(b.rps.map((x, k) => x / a.rps[k]!));
        const [cpu, cpuLow, cpuHigh] = medianInterval(b.cpuUs.map((x, k) => x / a.cpuUs[k]!));
        return `${percent(rps)} [${percent(rpsLow)}, ${percent(rpsHigh)}] | ${percent(cpu)} [${percent(cpuLow)}, ${percent(cpuHigh)}]`;
      });
      console.log(`| ${l.name} | ${cells.join(" | ")} |`);
    }
    if (GROUPS) printPooled(bundles, results);
    // AB_RAW=file: every round's numbers, for ratios between any two bundles.
    if (process.env.AB_RAW) writeFileSync(process.env.AB_RAW, JSON.stringify({ bundles, loads: LOADS.map((l) => l.name), results }, null, 1));
    if (delivered > 0) console.log(`\nwebhook deliveries received: ${delivered}`);
    receiver.close();
  } finally {
    stopAll();
    await node.stop();
  }
}

await main();
