// Memory held by bodies still arriving is given back once their connections close (#51): 450 connections each
// sending all but 100 bytes of a 1 MB body. Here one IP may hold 192 MB of the body budget, so ~190 bodies are
// held at once, not the default share's 32. Kept in the heap as 64 KB socket reads, they stayed in glibc's
// heap after their connections closed (measured: +25 to +140 % of RSS for good); memory/largeBody.ts keeps
// them in buffers of their own, which glibc unmaps when they are dropped. The attacker is a process of its own and this file runs in a
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
    it(`(${framing}): RSS grows < 300 MB, and comes back near its start once they close`, { timeout: 60_000 }, async () => {
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
        // They are held (up to 192 MB of bodies; on HTTP/2 each session's 8 MB share, 120 MB): the attack did
        // take memory.
        expect(rss() - start).toBeGreaterThan(70 * MB);
        attacker.stdin!.write("close\n");
        await next();
      } finally {
        attacker.kill();
      }
      expect(peak.stop() - start).toBeLessThan(300 * MB);
      const limit = start * (framing === "chunked" ? 1.25 : 1.2);
      // Settled again while above the line, for up to 10 s: beside the suite's other files the gateway may still
      // be closing the 450 connections when the first 2 s are up (+22 % once in a full run, +3 % alone).
      for (let tries = 0; tries < 5; tries++) {
        await settle();
        if (rss() < limit) break;
      }
      // A body of no declared length is spilled into a mapping of at least 33 MB, unmapped when dropped; a
      // declared one into a buffer of exactly its length, which is glibc's own mapping only below glibc's mmap
      // threshold: fixed at 256 KB where the gateway is started (npm start, the Dockerfile, npm test), else
      // raised by glibc as it frees (content-length: +97 % without it, +3 % with it). Chunked bodies go
      // through node:http, whose own per-connection allocations stay in the heap: +4 to +15 % in runs here.
      // Before largeBody.ts: +140 %.
      expect(rss()).toBeLessThan(limit);
    });
  }
});
