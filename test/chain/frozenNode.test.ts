// A node that stops answering is not ready (#62): anvil frozen with SIGSTOP used to leave /readyz 200 and
// every uncached read waiting 10 s for its timeout. Now the probe's own deadline marks it stalled.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";
import { descendants } from "../helpers/processes.js";

describe("a frozen node", () => {
  let gw: Gateway;
  let anvilPids: number[];
  beforeAll(async () => {
    gw = await startTestGateway();
    const watchdog = gw.network("testnet").embeddedPid;
    expect(watchdog).toBeTypeOf("number");
    anvilPids = descendants(watchdog!);
    expect(anvilPids.length).toBeGreaterThan(0);
  });
  afterAll(async () => {
    for (const pid of anvilPids ?? []) process.kill(pid, "SIGCONT");
    await gw?.close();
  });

  it("SIGSTOP for 10 s: /readyz false within 3 s, reads answer an error within 1 s, all well after SIGCONT", { timeout: 40_000 }, async () => {
    const url = gw.network("testnet").url;
    const read = (i: number) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_getBalance", params: [`0x${(i + 0x5000).toString(16).padStart(40, "0")}`, "latest"] }),
      });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    for (const pid of anvilPids) process.kill(pid, "SIGSTOP");
    const frozenAt = performance.now();
    try {
      await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 3_000, interval: 100 }).toBe(503);
      expect(performance.now() - frozenAt).toBeLessThan(3_000);
      const body = (await (await fetch(`${url}/readyz`)).json()) as { upstreams: { lastError?: string }[] };
      expect(body.upstreams[0]!.lastError).toMatch(/did not answer its health probe/);
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const res = await read(i);
        const answer = (await res.json()) as { error?: { code: number; message: string } };
        expect(performance.now() - t).toBeLessThan(1_000);
        expect(answer.error?.code).toBe(-32603);
        expect(res.status).toBe(503);
      }
      const left = 10_000 - (performance.now() - frozenAt);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    } finally {
      for (const pid of anvilPids) process.kill(pid, "SIGCONT");
    }
    await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 5_000, interval: 100 }).toBe(200);
    const res = await read(99);
    expect(((await res.json()) as { result?: string }).result).toBe("0x0");
  });
});
