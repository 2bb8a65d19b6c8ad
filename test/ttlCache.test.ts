// The expiring caches (key lookups, webhook endpoints, sent hashes, timed-out sources) on the request path:
// they expire entries on time and arm no timer to do it (lru-cache's default armed one a millisecond per busy cache).
import { afterEach, describe, expect, it, vi } from "vitest";
import { ttlCache } from "../src/ttlCache.js";

describe("ttlCache", () => {
  afterEach(() => vi.restoreAllMocks());

  it("arms no timer however often it is read and written", async () => {
    const cache = ttlCache<string, number>(100, 1_000);
    const timers = vi.spyOn(globalThis, "setTimeout");
    for (let tick = 0; tick < 20; tick++) {
      for (let i = 0; i < 50; i++) {
        cache.set(`k${i}`, i);
        expect(cache.get(`k${i}`)).toBe(i);
        cache.has(`k${i + 1}`);
      }
      await new Promise<void>((r) => setImmediate(r)); // a later turn of the loop: the clock has moved
      const spin = performance.now() + 1.5;
      while (performance.now() < spin); // past lru-cache's default 1 ms reading
    }
    expect(timers).not.toHaveBeenCalled();
  });

  it("forgets an entry once its time is up, and keeps at most max", async () => {
    const cache = ttlCache<string, number>(3, 50);
    cache.set("a", 1);
    expect(cache.get("a")).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(cache.get("a")).toBeUndefined();
    for (const k of ["b", "c", "d", "e"]) cache.set(k, 1);
    expect([...cache.keys()].sort()).toEqual(["c", "d", "e"]);
  });
});
