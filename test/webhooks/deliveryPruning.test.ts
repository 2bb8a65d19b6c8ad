// Finished webhook deliveries are deleted after WEBHOOK_DELIVERY_RETENTION_MS: one row per event per
// endpoint, they otherwise piled up for good (on the embedded store, until the disk was full and every write
// got 503). The gateway's hourly housekeeping asks the store (src/gateway.ts). Delivered and failed ones go,
// pending ones stay; in slices, so the embedded store's deletes never hold the event loop long.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStores, type Stores } from "../../src/store/openStores.js";
import type { WebhookStore } from "../../src/store/webhookStore.js";
import { freshSchemaUrl } from "../helpers/postgres.js";

const endpoint = (id: string, network: string) => ({
  id,
  keyId: "key1",
  network,
  signer: "0x000000000000000000000000000000000000bEEF",
  url: "https://example.org/hook",
  events: ["transaction.completed"],
  secret: "s",
  logFilter: null,
});

/** `n` events for the endpoint; the first `finish` of them delivered (every other one failed instead). */
async function events(store: WebhookStore, webhookId: string, n: number, finish: number): Promise<void> {
  for (let i = 0; i < n; i++) await store.enqueue(webhookId, "log", "{}", `${webhookId}-${i}`);
  for (let i = 0; i < finish; i++) {
    const next = (await store.nextPending(webhookId))!;
    if (i % 2 === 0) await store.delivered(next.id, 200);
    else await store.failed(next.id, "gave up");
  }
}

describe.each(["embedded", "postgres"] as const)("finished webhook deliveries (%s)", (kind) => {
  let stores: Stores;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "prune-"));
    if (kind === "postgres") {
      const s = await freshSchemaUrl();
      drop = s.drop;
      stores = await openStores({ dataDir, databaseUrl: s.url });
    } else stores = await openStores({ dataDir });
  });
  afterAll(async () => {
    await stores?.close();
    await drop?.();
  });

  it("are deleted past their retention, in slices; pending ones stay", { timeout: 60_000 }, async () => {
    const store = stores.webhooks;
    await store.insert(endpoint("wh_a", "testnet"));
    await store.insert(endpoint("wh_b", "mainnet"));
    await events(store, "wh_a", 1_205, 1_200);
    await events(store, "wh_b", 10, 4);
    // Within the retention (they ended just now): nothing goes.
    expect(await store.pruneFinished(new Date(Date.now() - 3_600_000))).toBe(0);
    // Past it: every finished one, over two slices of 1,000.
    expect(await store.pruneFinished(new Date(Date.now() + 1_000))).toBe(1_204);
    const left = [...(await store.deliveries("wh_a", 10_000)), ...(await store.deliveries("wh_b", 100))];
    expect(left).toHaveLength(11);
    expect(left.every((d) => d.status === "pending")).toBe(true);
  });

  it("the backlog counts a network's pending deliveries of active endpoints, with the oldest one's age", async () => {
    const store = stores.webhooks;
    // Left by the test above: 5 pending on testnet (wh_a), 6 on mainnet (wh_b).
    const testnet = await store.backlog("testnet");
    expect(testnet.pending).toBe(5);
    expect(testnet.oldestSeconds).toBeGreaterThanOrEqual(0);
    expect(testnet.oldestSeconds).toBeLessThan(120);
    expect((await store.backlog("mainnet")).pending).toBe(6);
    await store.disable("wh_b", "test");
    expect(await store.backlog("mainnet")).toEqual({ pending: 0, oldestSeconds: 0 });
  });
});
