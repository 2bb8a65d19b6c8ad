// One RateLimits deciding for callers, networks and limits that alternate request by request, as a busy
// gateway's do: each (network, caller, limit) keeps its own count (the limiter remembers the last ones it used).
import { describe, expect, it } from "vitest";
import { RateLimits } from "../../src/limits/rateLimits.js";
import { createLogger } from "../../src/log/logger.js";

describe("RateLimits with interleaved callers", () => {
  it("networks, addresses, keys and per-key limits alternating never share a count", async () => {
    const limits = new RateLimits(
      { requestsPerWindow: 3, windowMs: 60_000, tryItOutRequestsPerWindow: 3, failMode: "open", decisionTimeoutMs: 1_000 },
      createLogger("error"),
    );
    const publicCaller = { kind: "public" } as const;
    const key = { kind: "key", keyId: "k1" } as const;
    const ownLimit = { kind: "key", keyId: "k2", requestsPerMinute: 5 } as const;
    const outcome = (network: string, access: Parameters<RateLimits["checkRequests"]>[1], ip: string): string => {
      try {
        const d = limits.checkRequests(network, access, ip, 1);
        return `ok ${(d as { remaining: number }).remaining}`;
      } catch {
        return "refused";
      }
    };
    const seen: string[] = [];
    for (let round = 0; round < 4; round++) {
      seen.push(outcome("testnet", publicCaller, "10.0.0.1"));
      seen.push(outcome("mainnet", publicCaller, "10.0.0.1"));
      seen.push(outcome("testnet", publicCaller, "10.0.0.2"));
      seen.push(outcome("testnet", key, "10.0.0.9"));
      seen.push(outcome("testnet", ownLimit, "10.0.0.9"));
    }
    // Rounds of five: each caller counts down its own three (five for the key with its own limit).
    expect(seen).toEqual([
      ...["ok 2", "ok 2", "ok 2", "ok 2", "ok 4"],
      ...["ok 1", "ok 1", "ok 1", "ok 1", "ok 3"],
      ...["ok 0", "ok 0", "ok 0", "ok 0", "ok 2"],
      ...["refused", "refused", "refused", "refused", "ok 1"],
    ]);
    await limits.close();
  });
});
