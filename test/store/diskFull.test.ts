// The embedded store on a full disk (#52): writes get 503 "journal unavailable" (not 500), readiness is false;
// once space is back readiness returns by itself and the next write succeeds. The data directory is a small
// tmpfs (mounting needs root, as CI has; skipped elsewhere).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

const dir = mkdtempSync(join(tmpdir(), "gw-full-"));
const mounted = (() => {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!mounted)("embedded store on a full disk", () => {
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    execFileSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("503 and readiness false while full; space back, ready again and the next write succeeds", { timeout: 60_000 }, async () => {
    gw = await startTestGateway({ mutate: (c) => (c.dataDir = dir) });
    const url = gw.network("testnet").url;
    expect((await postJson(url + "/zkt/try-it-out", { arguments: "before" })).status).toBe(200);
    // Fill the disk to the last byte.
    const filler = join(dir, "filler");
    const chunk = Buffer.alloc(64 * 1024, 1);
    let size = 0;
    for (;;) {
      try {
        writeFileSync(filler, chunk, { flag: "a" });
        size += chunk.length;
      } catch {
        break;
      }
    }
    for (let n = 1024; n >= 1; n >>= 1) {
      try {
        writeFileSync(filler, Buffer.alloc(n, 1), { flag: "a" });
      } catch {
        // next smaller
      }
    }
    expect(size).toBeGreaterThan(0);
    // Writes until one meets the full disk (SQLite may still have room in pages it holds).
    let res: Awaited<ReturnType<typeof postJson>> | undefined;
    for (let i = 0; i < 2_000; i++) {
      res = await postJson(url + "/zkt/try-it-out", { arguments: `while full ${i} ${"x".repeat(2_000)}` });
      if (res.status !== 200) break;
    }
    expect(res!.status).toBe(503);
    expect(res!.json).toMatchObject({
      success: false,
      errorCode: "UPSTREAM_UNAVAILABLE",
      error: expect.stringMatching(/journal is unavailable \(the disk is full\)/),
    });
    const ready = await fetch(url + "/readyz");
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { store: string }).store).toMatch(/disk is full/);

    rmSync(filler);
    await until(async () => (await fetch(url + "/readyz")).status === 200, 10_000);
    expect((await postJson(url + "/zkt/try-it-out", { arguments: "after" })).status).toBe(200);
  });
});
