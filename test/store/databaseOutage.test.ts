// A journal database outage (#52): PostgreSQL cut under load (every connection reset, new ones refused, as
// `pg_ctl stop -m immediate` does) must not end the process; writes meanwhile get 503 "journal unavailable"
// and readiness is false; once it is back writes succeed again, and every acknowledged write is mined once.
// A gateway started while PostgreSQL is away waits for it instead of exiting, its ports answering meanwhile
// (alive, not ready), and becomes ready when it comes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { expectMinedOnceAndCompleted, postJson, startTestGateway } from "../helpers/gateway.js";
import { freshSchemaUrl, PG_BASE } from "../helpers/postgres.js";
import { type CuttableLink, startCuttableLink } from "../helpers/cuttableLink.js";
import { until } from "../helpers/until.js";
import { freePort } from "../helpers/anvilProcess.js";
import { type PrivatePostgres, startPrivatePostgres } from "../helpers/privatePostgres.js";

const pgTarget = (() => {
  const u = new URL(PG_BASE);
  return { host: u.hostname, port: Number(u.port || 5432) };
})();
/** The schema's URL, through the link instead of straight to PostgreSQL. */
const through = (url: string, link: CuttableLink) => {
  const u = new URL(url);
  u.host = `127.0.0.1:${link.port}`;
  return u.toString();
};

/**
 * ZKT writes under load across a journal outage (`begin` … `holdMs` … `end`): 503s while it lasts, readiness
 * false, the process lives; after, writes succeed within 10 s and every acknowledged write is mined once.
 */
async function writesAcross(gw: Gateway, outage: { begin(): Promise<void>; end(): Promise<void>; holdMs: number }): Promise<void> {
  const url = gw.network("testnet").url;
  const apiKey = ((await postJson(url + "/portal/keys", { label: "outage" })).json as { apiKey: string }).apiKey;
  const acknowledged: { hash: string; queueId: string }[] = [];
  const statuses = new Map<number, number>();
  let phase: "before" | "cut" | "after" = "before";
  const duringCut: number[] = [];
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const res = await postJson(`${url}/zkt/${apiKey}`, { arguments: `outage ${n}/${i}` }).catch(() => ({ status: 0, json: undefined }));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (phase === "cut") duringCut.push(res.status);
      if (res.status === 200) acknowledged.push(res.json as { hash: string; queueId: string });
      else await new Promise((r) => setTimeout(r, 50));
    }
  };
  const clients = Array.from({ length: 4 }, (_, n) => client(n));
  await until(() => acknowledged.length >= 50, 30_000);

  await outage.begin();
  phase = "cut";
  await until(async () => (await fetch(url + "/readyz")).status === 503, 10_000);
  const ready = (await (await fetch(url + "/readyz")).json()) as { store: string };
  expect(ready.store).toMatch(/^unavailable/);
  const refused = await postJson(`${url}/zkt/${apiKey}`, { arguments: "while cut" });
  expect(refused.status).toBe(503);
  expect(refused.json).toMatchObject({ success: false, errorCode: "UPSTREAM_UNAVAILABLE", error: expect.stringMatching(/journal is unavailable/) });
  await new Promise((r) => setTimeout(r, outage.holdMs));

  await outage.end();
  const mendedAt = Date.now();
  phase = "after";
  const countAtMend = acknowledged.length;
  await until(() => acknowledged.length > countAtMend + 20, 10_000);
  expect(Date.now() - mendedAt).toBeLessThan(10_000);
  await until(async () => (await fetch(url + "/readyz")).status === 200, 10_000);
  running = false;
  await Promise.all(clients);

  // Nothing but answers and refusals: 200s, and 503s while the store was away (no 500).
  expect([...statuses.keys()].filter((s) => s !== 200 && s !== 503)).toEqual([]);
  expect(duringCut.filter((s) => s === 503).length).toBeGreaterThan(0);
  // Every acknowledged write is mined, once, and the journal caught up with what the chain did while it was
  // away: every status reads completed (#63: 87 and 719 mined writes still read "pending" after a disk-full outage).
  await expectMinedOnceAndCompleted(gw.network("testnet").upstreamUrls[0]!, url, acknowledged);
}

describe("journal database outage (PostgreSQL)", () => {
  let schema: Awaited<ReturnType<typeof freshSchemaUrl>>;
  let link: CuttableLink;
  let gw: Gateway | undefined;

  beforeAll(async () => {
    schema = await freshSchemaUrl();
    link = await startCuttableLink(pgTarget);
  });
  afterAll(async () => {
    await gw?.close();
    await link?.close();
    await schema?.drop();
  });

  it("cut under load: 503s meanwhile, readiness false, the process lives; after, writes succeed and every acknowledged one is mined", {
    timeout: 120_000,
  }, async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.databaseUrl = through(schema.url, link);
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    await writesAcross(gw, { begin: () => link.cut(), end: () => link.mend(), holdMs: 5_000 });
  });

  it("a gateway started while PostgreSQL is away answers already (alive, not ready, 503s), then serves", { timeout: 60_000 }, async () => {
    await gw?.close();
    gw = undefined;
    await link.cut();
    const [testnetPort, mainnetPort] = [await freePort(), await freePort()];
    const starting = startTestGateway({
      networks: ["testnet", "mainnet"],
      mutate: (c) => {
        c.databaseUrl = through(schema.url, link);
        c.networks[0]!.port = testnetPort;
        c.networks[1]!.port = mainnetPort;
      },
    });
    let started = false;
    void starting.then(() => (started = true)).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(started).toBe(false);
    // The ports answer meanwhile (they refused connections before): a probe sees a replica starting.
    const held = `http://127.0.0.1:${testnetPort}`;
    expect((await fetch(`${held}/healthz`)).status).toBe(200);
    const readyz = await fetch(`${held}/readyz`);
    expect(readyz.status).toBe(503);
    expect(((await readyz.json()) as { starting: string }).starting).toMatch(/waiting for PostgreSQL/);
    const call = await postJson(held, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    expect(call.status).toBe(503);
    expect(call.headers.get("retry-after")).toBe("2");
    expect(call.json).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringMatching(/starting/) } });
    const zkt = await postJson(`http://127.0.0.1:${mainnetPort}/zkt/try-it-out`, { arguments: "too soon" });
    expect(zkt.status).toBe(503);
    expect(zkt.json).toMatchObject({ success: false, errorCode: "UPSTREAM_UNAVAILABLE" });
    await link.mend();
    gw = await starting;
    const url = gw.network("testnet").url;
    expect(url).toBe(held);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await postJson(url + "/zkt/try-it-out", { arguments: "after the wait" })).status).toBe(200);
  });
});

describe("journal database stopped (pg_ctl stop -m immediate)", () => {
  let pg: PrivatePostgres | undefined;
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await pg?.destroy();
  });

  // A cluster of the test's own, stopped as an operator would: every backend killed, crash recovery on start.
  it("for 10 s under load: the process lives, 503s meanwhile; after, writes succeed within 10 s and every acknowledged one is mined", {
    timeout: 180_000,
  }, async () => {
    pg = await startPrivatePostgres();
    const cluster = pg;
    gw = await startTestGateway({
      mutate: (c) => {
        c.databaseUrl = cluster.url;
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    await writesAcross(gw, { begin: () => cluster.stopImmediate(), end: () => cluster.start(), holdMs: 10_000 });
  });
});
