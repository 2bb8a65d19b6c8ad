// Usage a key holder can see (#54): GET /zgt/<key>/usage and RpcService.GetUsage count the key's requests (in
// the units the limits count) and writes exactly, with its limits and when they reset, and the last 24 hours
// by the hour.
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { UsageMeter } from "../../src/limits/usageMeter.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const HOUR = 3_600_000;

describe("usage meter", () => {
  it("counts by the hour; day is the last 24 hours, month the last 30 days; older hours are dropped", () => {
    const m = new UsageMeter();
    const t = Date.UTC(2026, 10, 27, 12, 30);
    m.requests("testnet", "k", 5, t - 40 * 24 * HOUR); // past the month
    m.requests("testnet", "k", 3, t - 10 * 24 * HOUR);
    m.requests("testnet", "k", 2, t - 2 * HOUR);
    m.write("k", t - 2 * HOUR);
    m.requests("testnet", "k", 1, t);
    // Another network's requests are its own (the request limits are per network); writes span both.
    m.requests("mainnet", "k", 7, t);
    const r = m.report("testnet", "k", t);
    expect(r.requests).toEqual({ minute: 1, day: 3, month: 6 });
    expect(r.writes).toEqual({ day: 1, month: 1 });
    expect(r.hourly).toHaveLength(24);
    expect(r.hourly.at(-1)).toEqual({ hour: Date.UTC(2026, 10, 27, 12), requests: 1, writes: 0 });
    expect(r.hourly.at(-3)).toEqual({ hour: Date.UTC(2026, 10, 27, 10), requests: 2, writes: 1 });
  });

  describe("over HTTP and Connect", () => {
    let gw: Gateway;
    let url: string;
    beforeAll(async () => {
      gw = await startTestGateway({
        networks: ["testnet", "mainnet"],
        mutate: (c) => {
          c.rateLimit.writesPerDay = 50;
          c.methodWeights = { eth_getBalance: 3 };
        },
      });
      url = gw.network("testnet").url;
    });
    afterAll(() => gw?.close());

    it("counts the key's requests and writes exactly", async () => {
      const { apiKey } = await gw.keys.create();
      for (let i = 0; i < 4; i++) await postJson(`${url}/zgt/${apiKey}`, { jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] });
      // A weighed method counts its units; a batch its calls'.
      await postJson(`${url}/zgt/${apiKey}`, {
        jsonrpc: "2.0",
        id: 9,
        method: "eth_getBalance",
        params: ["0x000000000000000000000000000000000000bEEF", "latest"],
      });
      for (let i = 0; i < 2; i++) expect((await postJson(`${url}/zkt/${apiKey}`, { arguments: `use ${i}` })).status).toBe(200);
      // 4 + 3 + 2 writes (each a request too) = 9 units; reading the usage is not counted (#65: it said more
      // than X-RateLimit-Remaining had taken).
      const res = await fetch(`${url}/zgt/${apiKey}/usage`);
      expect(res.status).toBe(200);
      const u = (await res.json()) as {
        requests: { minute: number; day: number; month: number };
        writes: { day: number; month: number };
        limits: { requestsPerMinute: number; writesPerDay: number | null; writesPerMonth: number | null };
        resets: { requestsSeconds: number; writesDaySeconds: number };
        hourly: { hour: string; requests: number; writes: number }[];
      };
      // "This minute" restarts at the minute's turn, which the test may cross: at most the day's.
      expect(u.requests).toMatchObject({ day: 9, month: 9 });
      expect(u.requests.minute).toBeGreaterThan(0);
      expect(u.requests.minute).toBeLessThanOrEqual(9);
      expect(u.writes).toEqual({ day: 2, month: 2 });
      expect(u.limits).toEqual({ requestsPerMinute: 1500, writesPerDay: 50, writesPerMonth: null });
      expect(u.resets.requestsSeconds).toBeGreaterThan(0);
      expect(u.resets.writesDaySeconds).toBeGreaterThan(86_000);
      expect(u.hourly).toHaveLength(24);
      // The last hours hold them all (the test may cross an hour's turn).
      expect(u.hourly.reduce((n, h) => n + h.requests, 0)).toBe(9);
      expect(u.hourly.reduce((n, h) => n + h.writes, 0)).toBe(2);

      // Connect: the same figures (neither usage read counted).
      const client = createClient(RpcService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
      const c = await client.getUsage({}, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(c.requests?.day).toBe(9n);
      // Per network: ten calls on the main network do not show on the test network's usage, and the other
      // way round (they said both networks' sum).
      const main = gw.network("mainnet").url;
      for (let i = 0; i < 10; i++) await postJson(`${main}/zgt/${apiKey}`, { jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] });
      const onTest = (await (await fetch(`${url}/zgt/${apiKey}/usage`)).json()) as { requests: { day: number } };
      const onMain = (await (await fetch(`${main}/zgt/${apiKey}/usage`)).json()) as { requests: { day: number } };
      expect([onTest.requests.day, onMain.requests.day]).toEqual([9, 10]);
      expect(c.writes?.month).toBe(2n);
      // Without a key: 401.
      expect((await fetch(`${url}/zgt/cgw_nope/usage`)).status).toBe(401);
    });
  });
});
