// A write's callback is written once whichever comes first (#56): the write's outcome (the status change writes
// the event, with the callback attached) or the attach (the outcome came before it: a node refusing at once).
// Against the embedded store and PostgreSQL.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStores, type Stores } from "../../src/store/openStores.js";
import type { SubmissionRecord } from "../../src/store/submissionStore.js";
import { callbacksEndpointId } from "../../src/store/webhookStore.js";
import { newQueueId } from "../../src/sequencer/queueId.js";
import { WriteCallbacks } from "../../src/webhooks/writeCallbacks.js";
import { freshSchemaUrl } from "../helpers/postgres.js";

const SIGNER = "0x000000000000000000000000000000000000c0de";
const access = { kind: "key" as const, keyId: "key-1", walletIndex: 7 };

describe.each(["embedded", "postgres"] as const)("write callbacks (%s)", (kind) => {
  let stores: Stores;
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await stores?.close();
    await drop?.();
  });

  it("one event whether the outcome comes before or after the attach", async () => {
    if (kind === "postgres") {
      const schema = await freshSchemaUrl();
      drop = schema.drop;
      stores = await openStores({ dataDir: mkdtempSync(join(tmpdir(), "cb-")), databaseUrl: schema.url });
    } else stores = await openStores({ dataDir: mkdtempSync(join(tmpdir(), "cb-")) });
    const callbacks = new WriteCallbacks({
      network: "testnet",
      store: stores.webhooks,
      journal: stores.journal,
      allowPrivate: true,
      walletOf: () => SIGNER,
      seedSecret: "test-seed",
      secretOverlapMs: 60_000,
      written: () => undefined,
    });
    const record = (): SubmissionRecord => ({
      queueId: newQueueId(),
      network: "testnet:0xabc",
      signer: SIGNER,
      nonce: 0,
      hash: "0x" + "11".repeat(32),
      raw: "0x00",
      kind: "message",
      status: "pending",
      createdAt: new Date(),
    });
    const endpoint = callbacksEndpointId(access.keyId, "testnet");
    const events = async () => (await stores.webhooks.deliveries(endpoint, 100)).map((d) => [d.queueId, d.event, d.url]);

    // Attached first, then the outcome: the status change writes it.
    const first = record();
    await stores.journal.insert(first);
    await callbacks.attach(access, first.queueId, "http://127.0.0.1:9/first");
    expect(await events()).toEqual([]);
    await stores.journal.update(first.queueId, { status: "error", errorMessage: "refused" }, { urgent: true });
    expect(await events()).toEqual([[first.queueId, "transaction.error", "http://127.0.0.1:9/first"]]);
    // An attach again (a retry) writes nothing more.
    await callbacks.attach(access, first.queueId, "http://127.0.0.1:9/first");
    expect(await events()).toHaveLength(1);

    // The outcome first (no callback yet), then the attach: the attach writes it, once.
    const second = record();
    await stores.journal.insert(second);
    await stores.journal.update(second.queueId, { status: "error", errorMessage: "refused at once" }, { urgent: true });
    await callbacks.attach(access, second.queueId, "http://127.0.0.1:9/second");
    await stores.journal.update(second.queueId, { status: "error", errorMessage: "refused at once" }, { urgent: true });
    const written = await events();
    expect(written.filter(([q]) => q === second.queueId)).toEqual([[second.queueId, "transaction.error", "http://127.0.0.1:9/second"]]);
    // The key's callbacks endpoint is not one of its listed endpoints.
    expect(await stores.webhooks.listByKey(access.keyId, "testnet")).toEqual([]);
  });
});
