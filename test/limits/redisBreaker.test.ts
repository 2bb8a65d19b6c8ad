// Redis gone (a server that takes connections and never answers: the worst case, every command hangs): after
// the first decision times out, the fail policy answers at once until a back-off probe finds Redis again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server, type Socket, type AddressInfo } from "node:net";
import { RateLimits } from "../../src/limits/rateLimits.js";
import { GatewayError } from "../../src/errors.js";
import { createLogger } from "../../src/log/logger.js";

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
