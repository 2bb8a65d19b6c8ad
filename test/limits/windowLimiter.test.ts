// The in-process window limiter: N per caller per window, weights, refill at the caller's window boundary.
import { afterEach, describe, expect, it, vi } from "vitest";
import { WindowLimiter } from "../../src/limits/windowLimiter.js";

describe("WindowLimiter (in-process)", () => {
  afterEach(() => vi.useRealTimers());

  it("serves N per window per caller, counts weights, refuses without consuming, refills at the boundary", async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ["Date", "performance", "setInterval", "clearInterval"] });
    const limiter = new WindowLimiter({ limit: 5, windowMs: 60_000 });
    expect(limiter.take("a", 3)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
    expect(limiter.take("a", 3)).toMatchObject({ allowed: false, remaining: 2 });
    expect(limiter.take("a", 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take("b")).toMatchObject({ allowed: true, remaining: 4 });
    vi.advanceTimersByTime(59_000);
    expect(limiter.take("a")).toMatchObject({ allowed: false, resetSeconds: 1 });
    vi.advanceTimersByTime(1_000);
    expect(limiter.take("a")).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 60 });
    // Windows stay aligned to the caller's first request, also after idle windows.
    vi.advanceTimersByTime(2 * 60_000 + 30_000);
    expect(limiter.take("a")).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 30 });
    await limiter.close();
  });

  it("a step of the wall clock (+2 h then back, or -3 h) costs at most one window of refusals (#63)", async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ["Date", "performance", "setInterval", "clearInterval"] });
    const limiter = new WindowLimiter({ limit: 60, windowMs: 60_000 });
    for (let i = 0; i < 60; i++) expect(limiter.take("key").allowed).toBe(true);
    for (const step of [2 * 3_600_000, -2 * 3_600_000, -3 * 3_600_000]) {
      // The wall clock jumps; the monotonic clock (what measures windows) goes on as it was.
      vi.setSystemTime(Date.now() + step);
      const refused = limiter.take("key");
      expect(refused.allowed).toBe(false);
      // Told to come back within the window, not after the size of the step (Retry-After: 7222 before).
      expect(refused.resetSeconds).toBeLessThanOrEqual(60);
      vi.advanceTimersByTime(60_000);
      expect(limiter.take("key").allowed).toBe(true);
      for (let i = 1; i < 60; i++) limiter.take("key");
    }
    await limiter.close();
  });
});
