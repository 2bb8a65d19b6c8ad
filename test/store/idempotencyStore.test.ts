// The Idempotency-Key store, on the embedded SQLite file and on PostgreSQL: one run per key, replays,
// failures leave no trace, stale claims are settled, and answers past their 24 h are pruned.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlClient } from "../../src/store/sqlClient.js";
import { migrate } from "../../src/store/migrations.js";
import { openEmbeddedDatabase } from "../../src/store/embeddedDatabase.js";
import { sqlIdempotencyTable, sqliteIdempotencyTable, type IdempotencyTable } from "../../src/store/idempotencyTable.js";
import { IdempotencyStore, fingerprintOf, type ClaimHooks, type RenderError } from "../../src/store/idempotencyStore.js";
import { freshSchemaUrl } from "../helpers/postgres.js";
import { GatewayError } from "../../src/errors.js";

/** Errors as a transport would answer them. */
const render: RenderError = (err) => ({ status: err.httpStatus, body: JSON.stringify({ error: err.message, details: err.details }) });

/** A backend's table, and a way to age a claim as time passing would (no clock is faked). */
interface Backend {
  table: IdempotencyTable;
  age(scope: string, key: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

const backends: Record<string, () => Promise<Backend>> = {
  async embedded() {
    const db = openEmbeddedDatabase(mkdtempSync(join(tmpdir(), "idem-")));
    const age = db.prepare<[number, string, string]>("update idempotency set created_at = created_at - ? where scope = ? and key = ?");
    return { table: sqliteIdempotencyTable(db), age: async (scope, key, ms) => void age.run(ms, scope, key), close: async () => void db.close() };
  },
  async postgres() {
    const schema = await freshSchemaUrl();
    const db = await openSqlClient({ dataDir: mkdtempSync(join(tmpdir(), "idem-pg-")), databaseUrl: schema.url });
    await migrate(db);
    return {
      table: sqlIdempotencyTable(db),
      age: async (scope, key, ms) => void (await db.query("update idempotency set created_at = created_at - $3 * interval '1 millisecond' where scope = $1 and key = $2", [scope, key, ms])),
      async close() {
        await db.close();
        await schema.drop();
      },
    };
  },
};

describe.each(Object.keys(backends))("IdempotencyStore (%s)", (kind) => {
  let backend: Backend;
  let table: IdempotencyTable;
  let store: IdempotencyStore;
  beforeAll(async () => {
    backend = await backends[kind]!();
    table = backend.table;
    store = new IdempotencyStore(table);
  });
  afterAll(() => backend?.close());

  it("runs once per scope and key; a failed first attempt can be retried; non-2xx answers are not kept", async () => {
    let runs = 0;
    const ok = async () => ({ status: 200, body: `answer ${++runs}` });
    expect(await store.once("s", "k", "payload", ok, render)).toEqual({ status: 200, body: "answer 1", replayed: false });
    expect(await store.once("s", "k", "payload", ok, render)).toEqual({ status: 200, body: "answer 1", replayed: true });
    expect((await store.once("other scope", "k", "payload", ok, render)).body).toBe("answer 2");
    await expect(store.once("s", "f", "payload", async () => Promise.reject(new Error("boom")), render)).rejects.toThrow("boom");
    expect((await store.once("s", "f", "payload", ok, render)).body).toBe("answer 3");
    expect(await store.once("s", "e", "payload", async () => ({ status: 503, body: "busy" }), render)).toMatchObject({ replayed: false, status: 503 });
    expect((await store.once("s", "e", "payload", ok, render)).body).toBe("answer 4");
  });

  it("once the write is journaled its answer is kept whatever it is, and a retry runs nothing", async () => {
    let runs = 0;
    const timedOut = async ({ journaled }: ClaimHooks) => {
      runs++;
      journaled();
      return { status: 503, body: "accepted but not mined in time" };
    };
    expect(await store.once("j", "wait", "payload", timedOut, render)).toEqual({ status: 503, body: "accepted but not mined in time", replayed: false });
    expect(await store.once("j", "wait", "payload", timedOut, render)).toEqual({ status: 503, body: "accepted but not mined in time", replayed: true });
    expect(runs).toBe(1);
    // A throw after journaling is kept as a 500, not cleared for a retry that would send again.
    const broken = async ({ journaled }: ClaimHooks): Promise<{ status: number; body: string }> => {
      runs++;
      journaled();
      throw new Error("answer lost");
    };
    expect((await store.once("j", "throw", "payload", broken, render)).status).toBe(500);
    expect(await store.once("j", "throw", "payload", broken, render)).toMatchObject({ status: 500, replayed: true });
    expect(runs).toBe(2);
    // A GatewayError thrown then (a revert, say) is kept as itself, so the retry hears the same error.
    const reverted = async ({ journaled }: ClaimHooks): Promise<{ status: number; body: string }> => {
      runs++;
      journaled();
      throw new GatewayError("execution_reverted", "execution reverted: sold out");
    };
    const first = await store.once("j", "revert", "payload", reverted, render);
    expect(first).toMatchObject({ status: new GatewayError("execution_reverted", "x").httpStatus, replayed: false });
    expect(JSON.parse(first.body)).toMatchObject({ error: "execution reverted: sold out" });
    expect(await store.once("j", "revert", "payload", reverted, render)).toEqual({ ...first, replayed: true });
    expect(runs).toBe(3);
  });

  it("a claim left unanswered by a stopped process: the retry runs if nothing was journaled, else it is told where the write is", async () => {
    const journal = new Map<string, { queueId: string; hash: string }>();
    const settling = new IdempotencyStore(table, { findJournaled: async (k) => journal.get(k), staleAfterMs: 60_000 });
    // Two claims as a killed gateway leaves them: no answer, 10 minutes old; the second journaled its write.
    for (const key of ["before", "after"]) {
      await table.claim("crash", key, new Date(0), fingerprintOf("payload"));
      await backend.age("crash", key, 10 * 60_000);
    }
    const claim = await table.read("crash", "after");
    journal.set(`crash\nafter\n${claim!.createdAt.getTime()}`, { queueId: "q-1", hash: "0xabc" });
    let runs = 0;
    const write = async ({ journalKey }: ClaimHooks) => ({ status: 200, body: `ran ${++runs} under ${journalKey.split("\n").slice(0, 2).join("/")}` });
    expect(await settling.once("crash", "before", "payload", write, render)).toMatchObject({ status: 200, body: "ran 1 under crash/before" });
    expect(await settling.once("crash", "before", "payload", write, render)).toMatchObject({ status: 200, body: "ran 1 under crash/before", replayed: true });
    const told = await settling.once("crash", "after", "payload", write, render);
    expect(told).toMatchObject({ status: 503, replayed: true });
    expect(JSON.parse(told.body)).toEqual({ error: expect.stringContaining("GET /zkt/transactions/q-1"), details: { queueId: "q-1", hash: "0xabc" } });
    expect((await settling.once("crash", "after", "payload", write, render)).body).toBe(told.body);
    expect(runs).toBe(1);
    // A fresh claim is not stale: its request may still be running.
    await table.claim("crash", "running", new Date(0), fingerprintOf("payload"));
    const waiting = settling.once("crash", "running", "payload", write, render);
    await new Promise((r) => setTimeout(r, 200));
    await table.answer("crash", "running", 200, "the first answer");
    expect(await waiting).toMatchObject({ body: "the first answer", replayed: true });
    expect(runs).toBe(1);
  });

  it("the same key with another payload is refused with 422, not given the first answer; the first stays", async () => {
    let runs = 0;
    const write = async ({ journaled }: ClaimHooks) => (journaled(), { status: 200, body: `sent ${++runs}` });
    expect(await store.once("m", "k", '{"arguments":"a"}', write, render)).toEqual({ status: 200, body: "sent 1", replayed: false });
    const other = await store.once("m", "k", '{"arguments":"b"}', write, render);
    expect(other).toMatchObject({ status: 422, replayed: true });
    expect(JSON.parse(other.body).error).toMatch(/different request payload/);
    expect(await store.once("m", "k", '{"arguments":"a"}', write, render)).toEqual({ status: 200, body: "sent 1", replayed: true });
    expect(runs).toBe(1);
  });

  it("prune forgets answers older than 24 h and keeps the rest", async () => {
    await store.once("p", "old", "payload", async () => ({ status: 200, body: "old" }), render);
    await backend.age("p", "old", 25 * 3_600_000);
    await store.once("p", "new", "payload", async () => ({ status: 200, body: "new" }), render);
    expect(await store.prune()).toBe(1);
    expect(await table.read("p", "old")).toBeUndefined();
    expect(await table.read("p", "new")).toMatchObject({ status: 200, body: "new" });
  });
});
