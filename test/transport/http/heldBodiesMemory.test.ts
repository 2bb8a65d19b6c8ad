// Memory held by bodies still arriving is given back once their connections close (#51): 450 connections each
// sending all but 100 bytes of a 1 MB body. Here one IP may hold 192 MB of the body budget, so ~190 bodies are
// held at once, not the default share's 32. Kept in the heap as 64 KB socket reads, they stayed in glibc's
// heap after their connections closed (measured: +25 to +140 % of RSS for good); memory/largeBody.ts keeps
// them in buffers of their own. Bounded for every framing; given back asserted for chunked bodies (see the
// end of the test for declared ones). The attacker is a process of its own and this file runs in a
// process of its own: the memory measured is the gateway's.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { postJson, startTestGateway } from "../../helpers/gateway.js";
import { MB, peakRss, rss, settle } from "../../helpers/memory.js";

describe("bodies held half-sent", () => {
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  for (const framing of ["chunked", "content-length", "h2"] as const) {
    it(`(${framing}): RSS grows < 300 MB${framing === "chunked" ? ", and comes back near its start once they close" : ""}`, { timeout: 60_000 }, async () => {
      // A gateway of its own (the last attack's connections and budget gone), that has served a few answers.
      gw = await startTestGateway({
        mutate: (c) => {
          c.http.maxConnections = 1_500;
          c.http.maxConnectionsPerIp = 1_000;
          c.http.bodyBudgetPerIpBytes = 192 * MB;
        },
      });
      const port = Number(new URL(gw.network("testnet").url).port);
      for (let i = 0; i < 20; i++) await postJson(gw.network("testnet").url, { jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] });
      await settle();
      const start = rss();
      const peak = peakRss();
      // HTTP/2: the attack of #51, 15 sessions of 100 streams.
      const args = framing === "h2" ? ["15", "h2"] : framing === "chunked" ? ["450", "chunked"] : ["450"];
      const attacker = spawn(process.execPath, ["test/helpers/heldBodies.mjs", String(port), ...args], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      const lines = createInterface({ input: attacker.stdout! });
      const next = (): Promise<string> => new Promise((resolve) => lines.once("line", resolve));
      try {
        await next();
        await new Promise((r) => setTimeout(r, 2_000));
        // They are held (up to 192 MB of bodies): the attack did take memory. (Only where it is mapped afresh:
        // a declared body's buffer may come from glibc's heap, reusing what an earlier attack left there.)
        if (framing === "chunked") expect(rss() - start).toBeGreaterThan(70 * MB);
        attacker.stdin!.write("close\n");
        await next();
      } finally {
        attacker.kill();
      }
      expect(peak.stop() - start).toBeLessThan(300 * MB);
      await settle();
      // A body of no declared length is spilled into a mapping of at least 33 MB, unmapped when dropped: +7 to
      // +15 % in runs here, held to 25 % (node:http's own per-connection allocations stay in glibc's heap;
      // before largeBody.ts, +140 %). A declared one (content-length, HTTP/2 here) gets a buffer of exactly its
      // length, which glibc maps on its own only while its dynamic mmap threshold is below that size: a 33 MB
      // mapping for each brought V8 full collections that held other callers (#51's 10,000-entry ABI test,
      // p99 54-75 ms), so the return is not asserted for them (measured: within a few % when the threshold was
      // low, +60 % when an earlier attack had raised it).
      if (framing === "chunked") expect(rss()).toBeLessThan(start * 1.25);
    });
  }
});
