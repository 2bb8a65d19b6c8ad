// A hedged read's loser is cancelled: the slow node sees its request's connection closed as soon as the other
// node's answer wins, and the cancellation counts as no failure of the slow node (its circuit stays closed).
// Two fake nodes (test/helpers/fakeNode.ts): one answers reads at once, one only after 2 s.
import { afterAll, describe, expect, it } from "vitest";
import { twoNodePool } from "../helpers/fakeNode.js";

describe("hedged reads", () => {
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const c of closers) c();
  });

  it("the losing request is cancelled at once, and its node is not counted as failed", async () => {
    const hedges: boolean[] = [];
    // The slow node is asked first; the fast one answers reads at once.
    const {
      pool,
      first: slow,
      close,
    } = await twoNodePool(
      { readDelayMs: 2_000 },
      {},
      {
        timeoutMs: 5_000,
        routing: { hedge: true, hedgeMinMs: 20 },
        observer: { latency: () => undefined, health: () => undefined, hedge: (won) => hedges.push(won) },
      },
    );
    closers.push(close);
    const started = Date.now();
    const result = await pool.call("eth_getBalance", ["0x" + "11".repeat(20), "latest"]);
    expect(result).toBe("0x7");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(hedges).toEqual([true]);
    // The slow node's request ended when the fast answer won, not 2 s later.
    await expect.poll(() => slow.abandoned, { timeout: 500 }).toBe(1);
    expect(pool.health().every((u) => u.healthy)).toBe(true);
  });
});
