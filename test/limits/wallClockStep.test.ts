// A step of the wall clock never locks a caller out for longer than one window (#63). Round 3's fault run,
// libfaketime stepping the gateway's wall clock +2 h and back: 80 of 80 requests 429 with Retry-After: 7222.
// Here the gateway runs as a process under libfaketime (Debian's libfaketime; .ci/run installs it), its
// monotonic clock untouched, the fake time read from a file the test rewrites.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kill9 } from "../helpers/anvilProcess.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";

const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
const LIMIT = 60;

describe.runIf(existsSync(LIBFAKETIME) || process.env.CI)("the wall clock stepped under a running gateway", () => {
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    if (gw) await kill9(gw.child);
  });

  it("+2 h and back, then -3 h: a caller limited to 60 a minute gets at most one window of refusals after each step", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-faketime-"));
    const clock = join(dir, "faketime");
    writeFileSync(clock, "+0\n");
    gw = await startGatewayProcess({
      DATA_DIR: dir,
      RATE_LIMIT: String(LIMIT),
      RATE_LIMIT_WINDOW_MS: "4000",
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: clock,
      FAKETIME_NO_CACHE: "1",
      DONT_FAKE_MONOTONIC: "1",
      LOG_LEVEL: "warn",
    });
    const call = async () => {
      const res = await fetch(gw!.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
      await res.text();
      return { status: res.status, retryAfter: Number(res.headers.get("retry-after") ?? 0) };
    };
    // Spends the window, then checks the refusal names a wait within the window.
    const spend = async () => {
      for (let i = 0; i < LIMIT + 5; i++) await call();
      const refused = await call();
      expect(refused.status).toBe(429);
      expect(refused.retryAfter).toBeLessThanOrEqual(4);
    };
    for (const step of ["+2h", "+0", "-3h"]) {
      // Wait out the window on the monotonic clock, so each step starts from a fresh one.
      await expect.poll(async () => (await call()).status, { timeout: 10_000, interval: 500 }).toBe(200);
      await spend();
      writeFileSync(clock, `${step}\n`);
      // Still refused (a wall step refills nothing early), told to wait no more than the window...
      const after = await call();
      expect(after.status, `just after ${step}`).toBe(429);
      expect(after.retryAfter, `Retry-After just after ${step}`).toBeLessThanOrEqual(4);
      // ...and served again once it has passed.
      await expect.poll(async () => (await call()).status, { timeout: 6_000, interval: 250 }).toBe(200);
    }
  });
});
