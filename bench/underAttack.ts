// `npm run bench` section "Under attack" (#51): what another caller sees while one address attacks. A probe
// at 127.0.0.1 asks eth_chainId one request after another; each attack runs from 127.0.0.2 in a process of
// its own (bench/attacker.mjs); the probe's p50/p99 with and without each, in one run, against one gateway
// with the default per-IP defences (only the request limits raised, so attacks are not simply refused 429).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Agent, request } from "undici";

const SECONDS = Number(process.env.ATTACK_SECONDS ?? 6);

const ATTACKS: [string, string][] = [
  ["300 KB source of unterminated comments, 4 at a time", "source"],
  ["10,000-entry ABI, 2 at a time", "abi"],
  ["HTTP/2 rapid reset (HEADERS + RST_STREAM)", "reset"],
  ["450 connections holding 1 MB bodies (all but a byte)", "bodies"],
  ["10,000 idle sockets", "sockets"],
];

interface Seen {
  p50: number;
  p99: number;
  failed: number;
}

/** The probe: sequential eth_chainId over one kept-alive connection for `seconds`. */
async function probe(url: string, seconds: number): Promise<Seen> {
  const agent = new Agent({ connections: 1 });
  const latencies: number[] = [];
  let failed = 0;
  const end = Date.now() + seconds * 1000;
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
  while (Date.now() < end) {
    const t = performance.now();
    try {
      const res = await request(`${url}/`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/json" }, body });
      await res.body.dump();
      if (res.statusCode === 200) latencies.push(performance.now() - t);
      else failed++;
    } catch {
      failed++;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await agent.close();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), failed };
}

export async function underAttack(url: string): Promise<string[]> {
  const rows: string[] = [];
  const calm = await probe(url, SECONDS);
  const ms = (n: number) => n.toFixed(2);
  rows.push(`| none (baseline) | ${ms(calm.p50)} | ${ms(calm.p99)} | 1.0× / 1.0× | ${calm.failed} | |`);
  for (const [name, kind] of ATTACKS) {
    const attack = promisify(execFile)(process.execPath, ["bench/attacker.mjs", kind, url, String(SECONDS)], { maxBuffer: 1 << 20 });
    await new Promise((r) => setTimeout(r, 500)); // the attack under way first
    const seen = await probe(url, SECONDS - 1);
    const { stdout } = await attack;
    const done = JSON.parse(stdout.trim().split("\n").at(-1)!) as { sent: number; answered: number };
    rows.push(
      `| ${name} | ${ms(seen.p50)} | ${ms(seen.p99)} | ${(seen.p50 / calm.p50).toFixed(1)}× / ${(seen.p99 / calm.p99).toFixed(1)}× | ${seen.failed} | ${done.sent} sent, ${done.answered} answered |`,
    );
    await new Promise((r) => setTimeout(r, 1_000)); // sockets closed, back-offs not yet over: next attack
  }
  return [
    "## 9. Under attack",
    "",
    `Another caller (127.0.0.1, one eth_chainId after another) while one address (127.0.0.2) attacks for ${SECONDS} s, each attack in a process of its own; ` +
      "one gateway with the default per-IP defences, its request limits raised: the two floods of large bodies run at 100 to 160 requests a second, which " +
      "default limits would cut to 100 a minute (try-it-out, per IP), so their rows are what many addresses together could do, each parsed on the main thread. " +
      "Ratios are to the baseline of this run. (attacker: for sockets, answered = connections the gateway accepted.)",
    "",
    "| attack | others' p50 ms | p99 ms | p50 / p99 vs baseline | probe failures | attacker |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
  ];
}
