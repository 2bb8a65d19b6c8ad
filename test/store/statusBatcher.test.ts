// Batched status writes: one flush per status group after a short wait, "processing" dropped once moot, and a
// change someone waits on written at once together with its group.
import { describe, expect, it } from "vitest";
import { StatusBatcher } from "../../src/store/statusBatcher.js";
import type { SubmissionStatus } from "../../src/store/submissionStore.js";

function recording(): { batcher: StatusBatcher; flushes: { status: SubmissionStatus; ids: string[]; at: number }[] } {
  const flushes: { status: SubmissionStatus; ids: string[]; at: number }[] = [];
  const started = performance.now();
  return { flushes, batcher: new StatusBatcher(async (status, ids) => void flushes.push({ status, ids, at: performance.now() - started })) };
}

describe("StatusBatcher", () => {
  it("gathers plain changes into one write per status", async () => {
    const { batcher, flushes } = recording();
    const at = new Date();
    await Promise.all([batcher.mark("a", "completed", at), batcher.mark("b", "completed", at), batcher.mark("c", "error", at)]);
    expect(flushes.map((f) => [f.status, f.ids])).toEqual([
      ["completed", ["a", "b"]],
      ["error", ["c"]],
    ]);
    expect(flushes[0]!.at).toBeGreaterThanOrEqual(20);
  });

  it("an urgent change is written at once, with the rest of its group", async () => {
    const { batcher, flushes } = recording();
    const at = new Date();
    const early = batcher.mark("a", "completed", at);
    await batcher.mark("b", "completed", at, true);
    expect(flushes.map((f) => f.ids)).toEqual([["a", "b"]]);
    expect(flushes[0]!.at).toBeLessThan(20);
    await early;
    // A later change starts a new group.
    await batcher.mark("c", "completed", at);
    expect(flushes.map((f) => f.ids)).toEqual([["a", "b"], ["c"]]);
  });

  it('a "processing" mark made moot by a later status is not written', async () => {
    const { batcher, flushes } = recording();
    const marked = batcher.mark("a", "processing", undefined);
    await batcher.mark("a", "completed", new Date(), true);
    await marked;
    expect(flushes.map((f) => [f.status, f.ids])).toEqual([["completed", ["a"]]]);
  });
});
