// The in-process window limiter: N per caller per window, weights, refill at the caller's window boundary.
import { afterEach, describe, expect, it, vi } from "vitest";
import { WindowLimiter } from "../../src/limits/windowLimiter.js";

describe("WindowLimiter (in-process)", () => {
  afterEach(() => vi.useRealTimers());

  it("serves N per window per caller, counts weights, refuses without consuming, refills at the boundary", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const limiter = new WindowLimiter({ limit: 5, windowMs: 60_000 });
    expect(limiter.take("a", 3)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
    expect(limiter.take("a", 3)).toMatchObject({ allowed: false, remaining: 2 });
    expect(limiter.take("a", 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.take("b")).toMatchObject({ allowed: true, remaining: 4 });
    vi.setSystemTime(1_000_000 + 59_000);
    expect(limiter.take("a")).toMatchObject({ allowed: false, resetSeconds: 1 });
    vi.setSystemTime(1_000_000 + 60_000);
    expect(limiter.take("a")).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 60 });
    // Windows stay aligned to the caller's first request, also after idle windows.
    vi.setSystemTime(1_000_000 + 3 * 60_000 + 30_000);
    expect(limiter.take("a")).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 30 });
    await limiter.close();
  });
});
