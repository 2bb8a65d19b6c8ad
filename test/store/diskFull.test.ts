// The embedded store on a full disk (#52): writes get 503 "journal unavailable" (not 500), readiness is false;
// once space is back readiness returns by itself and the next write succeeds. The data directory is a small
// tmpfs (mounting needs root, as CI has; skipped elsewhere).
import { type ChildProcess, execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { expectMinedOnceAndCompleted, postJson, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

const dir = mkdtempSync(join(tmpdir(), "gw-full-"));
const mounted = (() => {
  try {
    // Room for the load test's own records once the filler is gone: at 8 MB a fast run's ~6,000 writes filled
    // the disk themselves, so the space never came back and the test measured that instead.
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64m", "tmpfs", dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!mounted)("embedded store on a full disk", () => {
  let gw: Gateway | undefined;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    await gw?.close();
    await Promise.all(children.map(kill9));
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

  // Under load (#63): the fault run saw every acknowledged write mined once, but 87 mined writes still read
  // "pending" after the space came back.
  it("under ZKT load, full for 3 s: every acknowledged write mined once, and every status catches up to completed", { timeout: 120_000 }, async () => {
    const port = await freePort();
    const node = `http://127.0.0.1:${port}`;
    children.push(await startAnvil(port));
    await gw?.close();
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [node];
        c.dataDir = join(dir, "load");
        c.rateLimit.requestsPerWindow = 10_000_000;
        c.rateLimit.tryItOutRequestsPerWindow = 10_000_000;
      },
    });
    const url = gw.network("testnet").url;
    const acknowledged: { queueId: string; hash: string }[] = [];
    const statuses = new Map<number, number>();
    let stop = false;
    let n = 0;
    const clients = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const res = await postJson(`${url}/zkt/try-it-out`, { arguments: `disk full ${n++}` }).catch(() => undefined);
        statuses.set(res?.status ?? 0, (statuses.get(res?.status ?? 0) ?? 0) + 1);
        if (res?.status === 200) acknowledged.push(res.json as { queueId: string; hash: string });
        else await new Promise((r) => setTimeout(r, 20));
      }
    });
    await new Promise((r) => setTimeout(r, 2_000));
    // Fill what is left of the disk, hold it full for 3 s, then give the space back.
    const filler = join(dir, "filler");
    writeFileSync(filler, "");
    const chunk = Buffer.alloc(1024 * 1024);
    try {
      for (;;) appendFileSync(filler, chunk);
    } catch {
      // ENOSPC: full
    }
    await new Promise((r) => setTimeout(r, 3_000));
    rmSync(filler);
    await new Promise((r) => setTimeout(r, 3_000));
    stop = true;
    await Promise.all(clients);
    expect(acknowledged.length).toBeGreaterThan(100);
    // The full disk was seen: some writes refused meanwhile (503), none answered otherwise.
    expect(statuses.get(503) ?? 0, JSON.stringify([...statuses])).toBeGreaterThan(0);

    // Mined, once each, and the journal caught up: every status completed.
    await expectMinedOnceAndCompleted(node, url, acknowledged);
  });
});
