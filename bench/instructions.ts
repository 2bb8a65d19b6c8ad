// `npm run bench:instructions [bundle ...]`: instructions the gateway's event-loop thread executes per answer,
// counted by valgrind's callgrind. Unlike req/s and CPU time, the count does not move with whatever else this
// shared machine is doing (two runs of one build differ by ~1-3 %, from GC timing), so two builds can be
// compared when a wall-clock A/B is lost in noise. It counts user-space instructions only (the kernel's
// share of a socket write is not in it) and not cache misses: a change is kept on the wall-clock bench.
//
// Each bundle (default: a fresh `npm run build`'s dist/main.mjs) runs under callgrind against one anvil; a
// fixed number of keep-alive requests warms it, the counters are zeroed, and a fixed number is counted, per
// method. Bundles run side by side (valgrind runs a process on one core at a time). The gateways inherit this
// process's environment (COALESCE_READS=false measures the uncoalesced path); NAME=value words after a bundle's
// path ("dist-ab/x.mjs MEMORY_TRIM_MS=0", one argument) are its own, so a setting can be compared too.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { fixedLoad as sendFixed } from "./fixedLoad.js";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startEmbeddedNode } from "../src/chain/embeddedNode.js";

const WARM = Number(process.env.WARM_REQUESTS ?? 20_000);
const COUNTED = Number(process.env.COUNTED_REQUESTS ?? 10_000);
const CONNECTIONS = 32;
/**
 * INSTR_METHODS: JSON-RPC methods, "batch40" (40 eth_getBalance of distinct addresses in one batch), "zkt" (a
 * try-it-out message write) or "zkt_keyed" (the same with an API key of its own).
 */
const METHODS = (process.env.INSTR_METHODS ?? "eth_chainId,eth_blockNumber").split(",");
/**
 * INSTR_WRITES=n: n try-it-out ZKT writes before the reads are warmed, so reads are counted in a process that
 * has served writes too (as in bench:ab, where they cost more after the write loads than before).
 */
const WRITES = Number(process.env.INSTR_WRITES ?? 0);

function bodyOf(method: string): string {
  if (method !== "batch40") return `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[]}`;
  return JSON.stringify(
    Array.from({ length: 40 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "eth_getBalance",
      params: ["0x" + (0xbeef00 + i).toString(16).padStart(40, "0"), "latest"],
    })),
  );
}

const MESSAGE = '{"arguments":"bench message"}';
/** Each port's API key (zkt_keyed). */
const keys = new Map<number, string>();

/** Exactly `n` requests of a method (see fixedLoad.ts). */
function fixedLoad(port: number, method: string, n: number): Promise<void> {
  if (method === "zkt") return sendFixed(port, "/zkt/try-it-out", MESSAGE, n, CONNECTIONS);
  if (method === "zkt_keyed") return sendFixed(port, `/zkt/${keys.get(port)}`, MESSAGE, n, CONNECTIONS);
  return sendFixed(port, "/", bodyOf(method), n, CONNECTIONS);
}

async function keyFor(port: number): Promise<string> {
  const answer = await fetch(`http://127.0.0.1:${port}/portal/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  return ((await answer.json()) as { apiKey: string }).apiKey;
}

/** Instructions in a callgrind dump: thread 1 (the event loop), and every thread's. */
function instructionsIn(dir: string, dump: number): { loop: number; all: number } {
  let loop = 0;
  let all = 0;
  for (const name of readdirSync(dir).filter((f) => f.startsWith(`cg.${dump}-`))) {
    const summary = /^summary: (\d+)/m.exec(readFileSync(join(dir, name), "utf8"));
    if (!summary) throw new Error(`no summary in ${name}`);
    all += Number(summary[1]);
    if (name === `cg.${dump}-01`) loop = Number(summary[1]);
  }
  return { loop, all };
}

async function answers(port: number): Promise<boolean> {
  try {
    await fixedLoad(port, "eth_chainId", 1);
    return true;
  } catch {
    return false;
  }
}

/** Every gateway started under valgrind: one bundle failing must not leave the others running (on their ports). */
const running = new Set<ChildProcess>();

/** Instructions per answer for each method, for one bundle: on the event loop (callgrind's thread 1) and over every thread. */
async function count(spec: string, upstream: string, port: number): Promise<Record<string, number>> {
  // NAME=value words after the bundle's path are its own environment (a setting as an A/B, as in bench:ab).
  const [bundle, ...words] = spec.split(/\s+/);
  const own = Object.fromEntries(words.map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]));
  const dir = mkdtempSync(join(tmpdir(), "cgw-callgrind-"));
  const proc: ChildProcess = spawn(
    "valgrind",
    ["--tool=callgrind", "--smc-check=all-non-file", "--separate-threads=yes", `--callgrind-out-file=${join(dir, "cg")}`, process.execPath, resolve(bundle!)],
    {
      env: {
        ...process.env,
        NETWORKS: "testnet",
        TESTNET_PORT: String(port),
        TESTNET_UPSTREAMS: upstream,
        LOG_LEVEL: "error",
        DATA_DIR: mkdtempSync(join(tmpdir(), "cgw-data-")),
        RATE_LIMIT: "1000000000",
        TRY_IT_OUT_RATE_LIMIT: "1000000000",
        RATE_LIMIT_PER_IP: "1000000000",
        PORTAL_KEYS_PER_HOUR: "1000",
        ...own,
      },
      stdio: "ignore",
    },
  );
  running.add(proc);
  try {
    const deadline = Date.now() + 300_000;
    while (!(await answers(port))) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`${bundle} did not start under valgrind`);
      await new Promise((r) => setTimeout(r, 2000));
    }
    if (METHODS.includes("zkt_keyed")) keys.set(port, await keyFor(port));
    if (WRITES > 0) await sendFixed(port, "/zkt/try-it-out", '{"arguments":"bench message"}', WRITES, CONNECTIONS);
    for (const method of METHODS) await fixedLoad(port, method, WARM);
    const perAnswer: Record<string, number> = {};
    for (const [i, method] of METHODS.entries()) {
      execFileSync("callgrind_control", ["-z", String(proc.pid)], { stdio: "ignore" });
      await fixedLoad(port, method, COUNTED);
      execFileSync("callgrind_control", ["-d", String(proc.pid)], { stdio: "ignore" });
      // Dump i+1, thread 1: the event loop.
      const file = join(dir, `cg.${i + 1}-01`);
      const deadlineDump = Date.now() + 30_000;
      while (!readdirSync(dir).includes(`cg.${i + 1}-01`) && Date.now() < deadlineDump) await new Promise((r) => setTimeout(r, 200));
      if (!readdirSync(dir).includes(`cg.${i + 1}-01`)) throw new Error(`no dump ${file}`);
      const { loop, all } = instructionsIn(dir, i + 1);
      perAnswer[method] = loop / COUNTED;
      perAnswer[`${method} (all threads)`] = all / COUNTED;
    }
    return perAnswer;
  } finally {
    proc.kill("SIGKILL");
  }
}

async function main(): Promise<void> {
  let bundles = process.argv.slice(2).map((b) => b.trim());
  if (bundles.length === 0) {
    execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
    bundles = [resolve("dist/main.mjs")];
  }
  const node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
  try {
    const counts = await Promise.all(bundles.map((b, i) => count(b, node.url, 8700 + i)));
    console.log(
      `instructions per answer, the event loop's and every thread's (callgrind; ${COUNTED} counted after ${WRITES > 0 ? `${WRITES} ZKT writes and ` : ""}${WARM} per method, ${CONNECTIONS} keep-alive connections)\n`,
    );
    // Each method on the event loop, then in every thread (V8's GC helpers, libuv's pool, workers).
    const columns = [...METHODS, ...METHODS.map((m) => `${m} (all threads)`)];
    console.log(`| bundle | ${columns.join(" | ")} |\n|---|${columns.map(() => "---").join("|")}|`);
    bundles.forEach((b, i) => console.log(`| ${b} | ${columns.map((m) => Math.round(counts[i]![m]!)).join(" | ")} |`));
  } finally {
    for (const proc of running) proc.kill("SIGKILL");
    await node.stop();
  }
}

await main();
