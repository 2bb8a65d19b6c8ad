// One anonymous request must not stall everyone (#51): sources and ABIs sized to cost seconds of CPU are
// refused or bounded, while another caller's requests go on being answered at their usual speed.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "../helpers/gateway.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";
import { startProbeProcess } from "../helpers/stallProbe.js";
import { TOKEN_ABI, TOKEN_SOURCE } from "../fixtures/contracts.js";
import { MAX_ABI_ENTRIES } from "../../src/zkt/abiBounds.js";

/** 8 functions of 300 chained if/else each: solc's optimizer takes ~40 s on it. */
const SLOW_SOURCE = `pragma solidity ^0.8.0;
contract Slow {
${Array.from(
  { length: 8 },
  (_, f) =>
    `  function f${f}(uint x) external pure returns (uint y) {\n` +
    Array.from({ length: 300 }, (_, i) => `    ${i ? "else " : ""}if (x == ${i}) y = x * ${i + 3} + ${f};`).join("\n") +
    "\n  }",
).join("\n")}
}`;

const TINY_SOURCE = "pragma solidity ^0.8.0;\ncontract Tiny { uint public v = 7; }";

/** The longest the gateway's event loop was held since the last scrape (its lag histogram restarts at each). */
async function loopMaxMs(url: string): Promise<number> {
  const m = /^gateway_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(await (await fetch(`${url}/metrics`)).text());
  if (!m) throw new Error("no event-loop lag in the metrics");
  return Number(m[1]) * 1000;
}

describe("hostile ZKT input", () => {
  let gw: GatewayProcess;
  let url: string;
  let apiKey: string;
  // A steady caller from a process of its own; the gateway runs as its own process too (the bundle, as
  // deployed), so neither the test runner's loop nor this file's own sends are in what they measure (the
  // first case once took 1,046 ms against < 1,000 with both in the runner).
  const others = () => startProbeProcess(`${url}/zgt/${apiKey}`, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');

  beforeAll(async () => {
    gw = await startGatewayProcess({ DATA_DIR: mkdtempSync(join(tmpdir(), "gw-hostile-")), SOLC_TIMEOUT_MS: "3000", LOG_LEVEL: "info" }, "bundle");
    url = gw.url;
    apiKey = ((await postJson(url + "/portal/keys", { label: "others" })).json as { apiKey: string }).apiKey;
    // solc's cold start (~1.3 s, longer on a loaded machine) is not what is measured: the event loop is.
    await postJson(`${url}/zkt/${apiKey}`, { code: TINY_SOURCE + "\n// warm" });
  }, 60_000);
  afterAll(async () => {
    gw?.child.kill();
    await gw?.exited;
  });

  it("a 300 KB source of unterminated comments is answered at once and holds nobody", { timeout: 30_000 }, async () => {
    const probe = await others();
    await loopMaxMs(url);
    const t = performance.now();
    const res = await postJson(`${url}/zkt/try-it-out`, { code: "/*a".repeat(100_000) });
    const took = performance.now() - t;
    const loopMax = await loopMaxMs(url);
    const seen = await probe.stop();
    expect(res.status).toBe(400);
    expect((res.json as { errorCode: string }).errorCode).toBe("COMPILATION_ERROR");
    expect(took).toBeLessThan(1_000);
    expect(loopMax).toBeLessThan(200);
    expect(seen.worst).toBeLessThan(200);
  });

  it("a source that compiles for ever ends at the deadline; another caller's deploy is answered meanwhile", { timeout: 60_000 }, async () => {
    // Its failure (if any) is this test's, reported where it is awaited, not an unhandled rejection meanwhile.
    const slow = postJson(`${url}/zkt/try-it-out`, { code: SLOW_SOURCE }).catch((err: unknown) => err as Error);
    await new Promise((r) => setTimeout(r, 300));
    // The same caller (this IP, no key) may not queue a second compile behind its first.
    const second = await postJson(`${url}/zkt/try-it-out`, { code: TINY_SOURCE + "\n// second" });
    expect(second.status).toBe(429);
    expect((second.json as { error: string }).error).toMatch(/a compile of yours is already running/);
    const t = performance.now();
    const tiny = await postJson(`${url}/zkt/${apiKey}`, { code: TINY_SOURCE });
    const tinyTook = performance.now() - t;
    expect(tiny.status).toBe(200);
    expect(tinyTook).toBeLessThan(3_000);
    const res = await slow;
    if (res instanceof Error) throw res;
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ success: false, errorCode: "COMPILATION_ERROR", error: expect.stringMatching(/compile exceeded 3 s/) });
    // The same source again is refused at once instead of holding a worker for another 3 s.
    const t2 = performance.now();
    const again = await postJson(`${url}/zkt/try-it-out`, { code: SLOW_SOURCE });
    expect(again.status).toBe(400);
    expect((again.json as { error: string }).error).toMatch(/compile exceeded 3 s/);
    expect(performance.now() - t2).toBeLessThan(1_000);
  });

  // A p99 on a machine the suite's other files share: a run that loses to them is run again (twice at most).
  it("two parallel calls with a 10,000-entry ABI are refused (413) and hold nobody", { timeout: 30_000, retry: 2 }, async () => {
    const deployed = await postJson(`${url}/zkt/${apiKey}`, { code: TOKEN_SOURCE, arguments: ["T", "T", "100"] });
    const token = (deployed.json as { contractAddress: string }).contractAddress;
    const big = [
      // Objects and strings alike (the probe's 720 KB ABI fits the 1 MB body limit).
      ...Array.from({ length: 10_000 }, (_, i) =>
        i % 2
          ? `function f${i}(uint256 a) view returns (uint256)`
          : { type: "function", name: `f${i}`, stateMutability: "view", inputs: [{ type: "uint256" }] },
      ),
      ...TOKEN_ABI,
    ];
    const body = { to: token, abi: big, method: "balanceOf", arguments: [token] };
    // Sent by curl, not from this process: serializing and sending 720 KB twice from the process the gateway
    // ran in was most of the stall the probe saw (p99 64 to 100 ms on an idle machine), not the gateway's.
    const file = join(mkdtempSync(join(tmpdir(), "abi-")), "big.json");
    writeFileSync(file, JSON.stringify(body));
    /** curl, spawned now and held until go(): the spawn's own cost (~15 ms each) is not in the window measured. */
    const curlReady = (path: string): { go(): Promise<{ status: number; json: unknown }> } => {
      const child = spawn("sh", [
        "-c",
        'read go; exec curl -s -w "\\n%{http_code}" -H "content-type: application/json" --data-binary "@$0" "$1"',
        path,
        `${url}/zkt/try-it-out`,
      ]);
      let out = "";
      child.stdout.on("data", (c: Buffer) => void (out += c.toString("utf8")));
      const exited = once(child, "exit");
      return {
        async go() {
          child.stdin.end("go\n");
          await exited;
          const at = out.lastIndexOf("\n");
          return { status: Number(out.slice(at + 1)), json: JSON.parse(out.slice(0, at)) };
        },
      };
    };
    // Others' p99 with nothing going on, in this run: on a loaded machine (the suite's other files) it alone
    // can pass 50 ms, which the attack must not add to.
    const calmProbe = await others();
    await new Promise((r) => setTimeout(r, 1_000));
    const calm = await calmProbe.stop();
    const limit = Math.max(50, 3 * calm.p99);
    const attackers = [curlReady(file), curlReady(file)];
    await new Promise((r) => setTimeout(r, 200));
    const probe = await others();
    const refused = await Promise.all(attackers.map((c) => c.go()));
    const seen = await probe.stop();
    for (const r of refused) {
      expect(r.status).toBe(413);
      expect(r.json).toMatchObject({ success: false, errorCode: "PAYLOAD_TOO_LARGE", error: expect.stringMatching(/at most 1000 are accepted/) });
    }
    expect(seen.p99, `calm p99 ${calm.p99.toFixed(1)} ms`).toBeLessThan(limit);

    // At the cap, only the named function is built: answered, and cheaply.
    const atCap = join(file, "..", "at-cap.json");
    writeFileSync(atCap, JSON.stringify({ ...body, abi: [...big.slice(0, MAX_ABI_ENTRIES - TOKEN_ABI.length), ...TOKEN_ABI] }));
    const atCapAttackers = [curlReady(atCap), curlReady(atCap)];
    await new Promise((r) => setTimeout(r, 200));
    const probe2 = await others();
    const answered = await Promise.all(atCapAttackers.map((c) => c.go()));
    const seen2 = await probe2.stop();
    for (const r of answered) expect(r.json).toMatchObject({ success: true, output: ["0"] });
    expect(seen2.p99, `calm p99 ${calm.p99.toFixed(1)} ms`).toBeLessThan(limit);
  });
});
