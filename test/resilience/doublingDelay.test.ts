// The one doubling wait of the house's long-lived retries (reconnects, restarts, breaker probes, bans).
import { describe, expect, it } from "vitest";
import { DoublingDelay } from "../../src/resilience/doublingDelay.js";

describe("DoublingDelay", () => {
  it("starts at firstMs, doubles up to maxMs, and starts over after a reset", () => {
    const d = new DoublingDelay({ firstMs: 250, maxMs: 1_000 });
    expect(d.ms).toBe(0);
    expect([d.next(), d.next(), d.next(), d.next()]).toEqual([250, 500, 1_000, 1_000]);
    d.reset();
    expect(d.ms).toBe(0);
    expect(d.next()).toBe(250);
  });
});
