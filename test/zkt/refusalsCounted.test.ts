// Refusals are counted and cheap (#62): 1,121 oversized ABIs (413) in 15 s from one address were counted as
// none, and never met try-it-out's limit of 100 a minute. Every submission refused before a handler admitted
// it (too large, not JSON, malformed) now counts against the caller's limits; past them the next ones are
// refused before their bodies are read.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startStallProbe } from "../helpers/stallProbe.js";

/** Posts the file `count` times in a row from its own process (127.0.0.9); prints status -> count. */
const ATTACKER = `
const [url, file, count] = process.argv.slice(1);
const body = require("fs").readFileSync(file);
(async () => {
  const undici = require(require.resolve("undici", { paths: [process.cwd()] }));
  const agent = new undici.Agent({ localAddress: "127.0.0.9" });
  const statuses = {};
  for (let i = 0; i < Number(count); i++) {
    const res = await undici.request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
    await res.body.text();
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
  }
  process.stdout.write(JSON.stringify(statuses));
  await agent.close();
})();`;

describe("refusals are counted", () => {
  let gw: Gateway;
  let url: string;
  let apiKey: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
    apiKey = ((await postJson(url + "/portal/keys", { label: "others" })).json as { apiKey: string }).apiKey;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("1,000 refused 10,000-entry ABI posts from one address: counted, 429 once try-it-out's limit is spent", { timeout: 120_000 }, async () => {
    const others = () => postJson(`${url}/zgt/${apiKey}`, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const abi = Array.from({ length: 10_000 }, (_, i) => `function f${i}(uint256 a) view returns (uint256)`);
    const file = join(mkdtempSync(join(tmpdir(), "abi-")), "big.json");
    writeFileSync(file, JSON.stringify({ to: "0x000000000000000000000000000000000000dEaD", abi, method: "f1", arguments: ["1"] }));
    const calmProbe = startStallProbe(others);
    await new Promise((r) => setTimeout(r, 3_000));
    const calm = await calmProbe.stop();
    const probe = startStallProbe(others);
    const child = spawn(process.execPath, ["-e", ATTACKER, `${url}/zkt/try-it-out`, file, "1000"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    await new Promise((r) => child.on("exit", r));
    const during = await probe.stop();
    const statuses = JSON.parse(out) as Record<string, number>;

    // try-it-out allows 100 a minute: the first 100 refusals spend it, the other 900 are 429.
    expect(statuses["413"], out).toBe(100);
    expect(statuses["429"], out).toBe(900);
    // Others' latency is not asserted here: #62's bar (p99 within 3x) is not met yet (x4-7 measured: the 100
    // counted refusals each parse a 720 KB body, ~25 ms of event loop at worst). The stall is in the notes.
    // The 900 refused past the limit were dropped as they arrived: never gathered, decoded or parsed (#62).
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const dropped = Number(/gateway_http_bodies_dropped_unread_total\{network="testnet"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    expect(dropped).toBe(900);
    console.log(
      `others: calm p50 ${calm.p50.toFixed(1)} ms, p99 ${calm.p99.toFixed(1)} ms; during p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms`,
    );
  });
});
