// A caller's deadline bounds the failover: once the caller has given up (its signal aborted: a Connect
// deadline, a disconnect), the pool starts no further attempt on another node; while it waits, it fails over.
import { afterAll, describe, expect, it } from "vitest";
import { twoNodePool } from "../helpers/fakeNode.js";

const read = [{ method: "eth_getBalance", params: ["0x" + "11".repeat(20), "latest"] }];

describe("failover within the caller's deadline", () => {
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const c of closers) c();
  });

  it("a caller still waiting is failed over; one that gave up is not", async () => {
    // The first node (fastest to probe, so asked first) times its reads out; the second answers them.
    const { pool, second: good, close } = await twoNodePool({ readDelayMs: 5_000 }, {}, { timeoutMs: 300, routing: { hedge: false, breakerFailures: 100 } });
    closers.push(close);

    const waiting = await pool.callMany(read, new AbortController().signal);
    expect(waiting[0]).toMatchObject({ ok: true, result: "0x7" });
    expect(good.reads).toBe(1);

    // The stuck node is unhealthy now; give it its place back so it is asked first again.
    await (pool as unknown as { probeAll(): Promise<void> }).probeAll();
    // A caller that has already given up: the one attempt in flight is not followed by a failover.
    await expect(pool.callMany(read, AbortSignal.abort())).rejects.toMatchObject({
      kind: "upstream_unavailable",
      message: expect.stringMatching(/caller gave up/),
    });
    expect(good.reads).toBe(1);
  });
});
