// Write quotas (#54): with KEY_WRITES_PER_DAY=3 a key's fourth write is refused with 429 QUOTA_EXCEEDED and
// Retry-After, before anything is signed or journaled, over ZKT and JSON-RPC alike; another key is unaffected;
// two replicas on one Redis (and one PostgreSQL for the keys) share the count. KEY_WRITES_PER_MONTH the same.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway, journalOf } from "../helpers/gateway.js";
import { freshSchemaUrl } from "../helpers/postgres.js";

describe("write quotas", () => {
  const gateways: Gateway[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    for (const d of drops) await d();
  });

  it("KEY_WRITES_PER_DAY=3: the fourth write of a key is 429 QUOTA_EXCEEDED, nothing journaled; another key writes on", async () => {
    const gw = await startTestGateway({ mutate: (c) => (c.rateLimit.writesPerDay = 3) });
    gateways.push(gw);
    const url = gw.network("testnet").url;
    const a = await gw.keys.create();
    const b = await gw.keys.create();
    const since = new Date(Date.now() - 1_000);
    for (let i = 0; i < 3; i++) expect((await postJson(`${url}/zkt/${a.apiKey}`, { arguments: `w${i}` })).status).toBe(200);
    const fourth = await postJson(`${url}/zkt/${a.apiKey}`, { arguments: "w3" });
    expect(fourth.status).toBe(429);
    expect(fourth.json).toMatchObject({
      success: false,
      errorCode: "QUOTA_EXCEEDED",
      error: expect.stringMatching(/at most 3 writes \(daily quota\) per day/),
    });
    expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(86_000);
    expect(await journalOf(gw).countBySignerSince(a.info.walletAddress, since)).toBe(3);
    // Keyed JSON-RPC writes share the quota, refused before the transaction is even decoded.
    const raw = await postJson(`${url}/zgt/${a.apiKey}`, { jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: ["0x00"] });
    expect(raw.status).toBe(429);
    expect(raw.json).toMatchObject({ error: { code: -32005, message: expect.stringMatching(/quota exceeded/) } });
    // Reads are not writes; another key's quota is its own.
    expect((await postJson(`${url}/zgt/${a.apiKey}`, { jsonrpc: "2.0", id: 2, method: "eth_chainId", params: [] })).status).toBe(200);
    expect((await postJson(`${url}/zkt/${b.apiKey}`, { arguments: "b0" })).status).toBe(200);
  });

  it("KEY_WRITES_PER_MONTH=2 holds over a larger daily quota", async () => {
    const gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.writesPerDay = 10;
        c.rateLimit.writesPerMonth = 2;
      },
    });
    gateways.push(gw);
    const url = gw.network("testnet").url;
    const { apiKey } = await gw.keys.create();
    for (let i = 0; i < 2; i++) expect((await postJson(`${url}/zkt/${apiKey}`, { arguments: `m${i}` })).status).toBe(200);
    const third = await postJson(`${url}/zkt/${apiKey}`, { arguments: "m2" });
    expect(third.json).toMatchObject({ errorCode: "QUOTA_EXCEEDED", error: expect.stringMatching(/at most 2 writes \(monthly quota\) per 30 days/) });
  });

  it("two replicas on one Redis share a key's count", { timeout: 60_000 }, async () => {
    const schema = await freshSchemaUrl();
    drops.push(schema.drop);
    // One namespace on the shared Redis for both, this run's own.
    const keyPrefix = `quota-${randomUUID()}`;
    const replica = () =>
      startTestGateway({
        mutate: (c) => {
          c.databaseUrl = schema.url;
          c.redisUrl = "redis://127.0.0.1:6379";
          c.rateLimit.keyPrefix = keyPrefix;
          c.rateLimit.writesPerDay = 3;
        },
      });
    const one = await replica();
    gateways.push(one);
    const two = await replica();
    gateways.push(two);
    const { apiKey } = await one.keys.create();
    const [u1, u2] = [one.network("testnet").url, two.network("testnet").url];
    for (const u of [u1, u2, u1]) expect((await postJson(`${u}/zkt/${apiKey}`, { arguments: "shared" })).status).toBe(200);
    const fourth = await postJson(`${u2}/zkt/${apiKey}`, { arguments: "shared" });
    expect(fourth.json).toMatchObject({ errorCode: "QUOTA_EXCEEDED" });
  });
});
