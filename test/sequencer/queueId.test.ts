import { describe, expect, it } from "vitest";
import { newQueueId } from "../../src/sequencer/queueId.js";

describe("queue ids", () => {
  it("are UUIDs of version 7 and RFC 4122's variant, distinct, in creation order across milliseconds", () => {
    const t = Date.UTC(2026, 10, 23);
    const ids = [newQueueId(t), newQueueId(t + 1), newQueueId(t + 1000), newQueueId(t + 86_400_000)];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(parseInt(ids[0]!.replace(/-/g, "").slice(0, 12), 16)).toBe(t);
    const many = new Set(Array.from({ length: 10_000 }, () => newQueueId()));
    expect(many.size).toBe(10_000);
  });
});
