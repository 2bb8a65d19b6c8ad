// Redis gone (a server that takes connections and never answers: the worst case, every command hangs): after
// the first decision times out, the fail policy answers at once until a back-off probe finds Redis again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server, type Socket, type AddressInfo } from "node:net";
import { RateLimits } from "../../src/limits/rateLimits.js";
import { GatewayError } from "../../src/errors.js";
import { createLogger } from "../../src/log/logger.js";
import { type CuttableLink, startCuttableLink } from "../helpers/cuttableLink.js";

describe("rate limits while Redis hangs", () => {
  let blackhole: Server;
  const sockets: Socket[] = [];
  let url: string;
  beforeAll(async () => {
    blackhole = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => blackhole.listen(0, "127.0.0.1", r));
    url = `redis://127.0.0.1:${(blackhole.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => blackhole.close(r));
  });

  async function latencies(failMode: "open" | "closed"): Promise<{ p50: number; outcomes: string[] }> {
    const limits = new RateLimits(
      {
        requestsPerWindow: 1500,
        windowMs: 60_000,
        tryItOutRequestsPerWindow: 100,
        failMode,
        decisionTimeoutMs: 250,
        redisUrl: url,
        keyPrefix: `t${Date.now()}`,
      },
      createLogger("error"),
    );
    const times: number[] = [];
    const outcomes: string[] = [];
    for (let i = 0; i < 60; i++) {
      const t = performance.now();
      try {
        await limits.checkRequests("testnet", { kind: "public" }, "10.0.0.1", 1);
        outcomes.push("served");
      } catch (err) {
        outcomes.push(err instanceof GatewayError ? err.kind : String(err));
      }
      times.push(performance.now() - t);
    }
    await limits.close();
    times.sort((a, b) => a - b);
    return { p50: times[Math.floor(times.length / 2)]!, outcomes };
  }

  it("fail-open serves at once (p50 under 5 ms), not after a 250 ms timeout per request", async () => {
    const { p50, outcomes } = await latencies("open");
    expect(outcomes.every((o) => o === "served")).toBe(true);
    expect(p50).toBeLessThan(5);
  });

  it("fail-closed answers 503 at once", async () => {
    const { p50, outcomes } = await latencies("closed");
    expect(outcomes.every((o) => o === "upstream_unavailable")).toBe(true);
    expect(p50).toBeLessThan(5);
  });
});

describe("rate limits when Redis comes back (#52)", () => {
  let link: CuttableLink;
  beforeAll(async () => {
    link = await startCuttableLink({ host: "127.0.0.1", port: 6379 });
  });
  afterAll(() => link.close());

  const limitsThroughLink = () =>
    new RateLimits(
      {
        requestsPerWindow: 60,
        windowMs: 60_000,
        tryItOutRequestsPerWindow: 100,
        failMode: "open",
        decisionTimeoutMs: 250,
        redisUrl: `redis://127.0.0.1:${link.port}`,
        keyPrefix: `back${Date.now()}${Math.random()}`,
      },
      createLogger("error"),
    );
  /** An outage long enough for the old back-off to grow past 8 s: fail-open decisions every 50 ms meanwhile. */
  const outage = async (limits: RateLimits, ms: number) => {
    await link.cut();
    for (const end = Date.now() + ms; Date.now() < end; ) {
      await limits.checkRequests("testnet", { kind: "public" }, "10.9.9.9", 1);
      await new Promise((r) => setTimeout(r, 50));
    }
    await link.mend();
  };

  it("the first burst after Redis is back is limited: its first request probes, the rest wait for it", { timeout: 30_000 }, async () => {
    const limits = limitsThroughLink();
    try {
      expect(await limits.checkRequests("testnet", { kind: "public" }, "10.0.0.2", 1)).toMatchObject({ limit: 60 });
      await outage(limits, 6_000);
      // Redis is reachable again (ioredis reconnects within its retry delay); nobody has asked since.
      await new Promise((r) => setTimeout(r, 2_500));
      const burst = await Promise.allSettled(Array.from({ length: 100 }, () => limits.checkRequests("testnet", { kind: "public" }, "10.0.0.3", 1)));
      const served = burst.filter((r) => r.status === "fulfilled").length;
      expect(served).toBeLessThanOrEqual(60);
      expect(burst.filter((r) => r.status === "rejected").every((r) => (r.reason as GatewayError).kind === "rate_limited")).toBe(true);
    } finally {
      await limits.close();
    }
  });

  it("limits hold again within 2 s of Redis answering, however long it was away", { timeout: 30_000 }, async () => {
    const limits = limitsThroughLink();
    try {
      await outage(limits, 6_000);
      const mendedAt = Date.now();
      let decided: unknown;
      while (decided === undefined && Date.now() - mendedAt < 10_000) {
        decided = await limits.checkRequests("testnet", { kind: "public" }, "10.0.0.4", 1);
        if (decided === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      // Counted from a fresh reservoir (a probe whose answer came too late may have counted once or twice).
      expect(decided).toMatchObject({ allowed: true, limit: 60 });
      expect((decided as { remaining: number }).remaining).toBeGreaterThanOrEqual(55);
      expect(Date.now() - mendedAt).toBeLessThan(2_000);
    } finally {
      await limits.close();
    }
  });
});
