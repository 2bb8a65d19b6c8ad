// `npm run bench:ab -- A.mjs B.mjs ...`: wall-clock A/B of gateway bundles (`npm run build` outputs kept
// aside) in one run, against one embedded anvil: requests/s and the gateway's CPU per answer for the proxy
// path (uncoalesced reads, so every request reaches the node) and for ZKT message writes. Rounds alternate
// the bundles, so a machine that slows down mid-run slows each of them alike; the table is the median
// round per bundle. Each runs with `npm start`'s Node flags; a bundle may add flags after its path, in one
// argument (`"dist-ab/x.mjs --max-semi-space-size=4"`: the later flag wins), so a flag can be an A/B too, and
// so can an environment variable (`"dist-ab/x.mjs MALLOC_MMAP_THRESHOLD_=65536"`). `AB_WEBHOOK=1` registers a
// webhook endpoint (a local receiver answering 200) for the bundle's key, so the keyed ZKT row pays for
// its deliveries (#56: within 10 % of none).
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync } from "node:fs";
import { fixedLoad as sendFixed } from "./fixedLoad.js";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startNodeFlags } from "../scripts/nodeFlags.js";
import { startEmbeddedNode } from "../src/chain/embeddedNode.js";

const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const REQUESTS = Number(process.env.AB_REQUESTS ?? 20_000);
const WRITES = Number(process.env.AB_WRITES ?? 3_000);
const CONNECTIONS = 32;
const CLOCK_TICKS = 100;

interface Load {
  name: string;
  /** The path, or per bundle (its key's). */
  path: string | ((bundle: number) => string);
  body: string;
  count: number;
}
const batch40 = JSON.stringify(
  Array.from({ length: 40 }, (_, i) => ({
    jsonrpc: "2.0",
    id: i,
    method: "eth_getBalance",
    params: ["0x" + (0xbeef00 + i).toString(16).padStart(40, "0"), "latest"],
  })),
);
const LOADS: Load[] = [
  { name: "eth_chainId (answered locally)", path: "/", body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', count: REQUESTS },
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
/** Each bundle's API key (the keyed row). */
const keys: string[] = [];

/** Exactly `n` requests of a load (see fixedLoad.ts). */
function fixedLoad(port: number, load: Load, n: number): Promise<void> {
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

/** The process's user+system CPU so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

async function startBundle(bundle: string, upstream: string, port: number): Promise<ChildProcess> {
  const [path, ...words] = bundle.split(/\s+/);
  // NAME=value words are the process's environment (an allocator setting, say), the rest Node flags.
  const env = Object.fromEntries(words.filter((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]));
  const flags = words.filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));
  const proc = spawn(process.execPath, [...startNodeFlags(), ...flags, resolve(path!)], {
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
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (let i = 0; i < 300; i++) {
    try {
      await fixedLoad(port, LOADS[0]!, 1);
      return proc;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill("SIGKILL");
  throw new Error(`${bundle} did not start`);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const bundles = process.argv.slice(2).map((b) => b.trim());
  if (bundles.length < 2) throw new Error("usage: npm run bench:ab -- A.mjs B.mjs [...]");
  const node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
  const procs: ChildProcess[] = [];
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
    for (const [i, b] of bundles.entries()) {
      procs.push(await startBundle(b, node.url, 8800 + i));
      keys.push(await keyFor(8800 + i, b.includes("AB_WEBHOOK=1"), receiverUrl));
    }
    // Warm every bundle on every load first (JIT, lanes, connections).
    for (const [i] of bundles.entries()) for (const l of LOADS) await fixedLoad(8800 + i, l, Math.min(l.count, 2_000));
    const results = bundles.map(() => LOADS.map(() => ({ rps: [] as number[], cpuUs: [] as number[] })));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [li, l] of LOADS.entries()) {
        // Alternate which bundle goes first, round by round.
        const order = bundles.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          const pid = procs[i]!.pid!;
          const cpu0 = cpuMs(pid);
          const t0 = process.hrtime.bigint();
          await fixedLoad(8800 + i, l, l.count);
          const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
          results[i]![li]!.rps.push(l.count / seconds);
          results[i]![li]!.cpuUs.push(((cpuMs(pid) - cpu0) * 1000) / l.count);
        }
      }
    }
    console.log(`Node ${process.version}; ${ROUNDS} alternating rounds, median; ${CONNECTIONS} keep-alive connections; reads uncoalesced\n`);
    console.log(`| load | ${bundles.map((b) => `${b.split("/").pop()} req/s | CPU µs/answer`).join(" | ")} |`);
    console.log(`|---|${bundles.map(() => "---|---").join("|")}|`);
    for (const [li, l] of LOADS.entries()) {
      console.log(`| ${l.name} | ${results.map((r) => `${Math.round(median(r[li]!.rps))} | ${median(r[li]!.cpuUs).toFixed(1)}`).join(" | ")} |`);
    }
    if (delivered > 0) console.log(`\nwebhook deliveries received: ${delivered}`);
    receiver.close();
  } finally {
    for (const p of procs) p.kill("SIGKILL");
    await node.stop();
  }
}

await main();
