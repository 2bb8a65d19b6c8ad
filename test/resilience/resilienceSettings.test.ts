// resilience.* in the configuration reaches the parts it names: here the HTTP/2 reset budget and its ban. A
// raw-frame attacker (HEADERS + RST_STREAM, reconnecting) past a budget of 20 is banned (counted) for 0.5 s,
// doubling, instead of the default 30 s: a second after the attack its address is served again.
import { spawn } from "node:child_process";
import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

const ATTACKER = "127.0.0.51";

/** One h2 JSON-RPC call from `localAddress`: its status, or 0 when the connection was refused. */
function h2Call(url: string, localAddress: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const session = http2.connect(url, { createConnection: () => net.connect({ host: hostname, port: Number(port), localAddress }) });
    session.on("error", () => resolve(0));
    session.on("close", () => resolve(0));
    const req = session.request({ ":method": "POST", ":path": "/", "content-type": "application/json" });
    req.on("error", () => resolve(0));
    req.on("response", (h) => {
      resolve(Number(h[":status"]));
      session.close();
    });
    req.end('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
  });
}

describe("resilience settings", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.resilience.h2Resets = { budget: 20, windowMs: 10_000, banMs: 500 }) });
    url = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("resilience.h2Resets: the ban fires past the budget and lasts what banMs says", { timeout: 30_000 }, async () => {
    const { port } = new URL(url);
    const child = spawn(process.execPath, ["test/helpers/h2RawAttack.mjs", "127.0.0.1", port, "1", "reset", ATTACKER], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise((r) => child.on("exit", r));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(Number(/gateway_http2_bans_total\{network="testnet",reason="resets"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThanOrEqual(1);
    // Banned for 0.5 s, doubling while the attack went on: served again within seconds, not after 30.
    await until(async () => (await h2Call(url, ATTACKER)) === 200, 8_000);
  });
});
