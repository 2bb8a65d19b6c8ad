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
import { IdempotencyStore, fingerprintOf, type ClaimHooks } from "../../src/store/idempotencyStore.js";
import { freshSchemaUrl } from "../helpers/postgres.js";
import { GatewayError } from "../../src/errors.js";

/** A backend's table, and a way to age a claim as time passing would (no clock is faked). */
interface Backend {
  table: IdempotencyTable;
  age(scope: string, key: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

const backends: Record<string, () => Promise<Backend>> = {
  async embedded() {
    const db = openEmbeddedDatabase(mkdtempSync(join(tmpdir(), "idem-")));
    const age = db.prepare("update idempotency set created_at = created_at - ? where scope = ? and key = ?");
    return { table: sqliteIdempotencyTable(db), age: async (scope, key, ms) => void age.run(ms, scope, key), close: async () => void db.close() };
  },
  async postgres() {
    const schema = await freshSchemaUrl();
    const db = await openSqlClient({ databaseUrl: schema.url });
    await migrate(db);
    return {
      table: sqlIdempotencyTable(db),
      age: async (scope, key, ms) =>
        void (await db.query("update idempotency set created_at = created_at - $3 * interval '1 millisecond' where scope = $1 and key = $2", [scope, key, ms])),
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

  it("runs once per scope and key; a failed first attempt can be retried", async () => {
    let runs = 0;
    const ok = async () => `answer ${++runs}`;
    expect(await store.once("s", "k", "payload", ok)).toEqual({ value: "answer 1", replayed: false });
    expect(await store.once("s", "k", "payload", ok)).toEqual({ value: "answer 1", replayed: true });
    expect((await store.once("other scope", "k", "payload", ok)).value).toBe("answer 2");
    await expect(store.once("s", "f", "payload", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect((await store.once("s", "f", "payload", ok)).value).toBe("answer 3");
    // An error before the write was journaled (a refusal) leaves no trace: the retry runs.
    await expect(store.once("s", "e", "payload", async () => Promise.reject(new GatewayError("upstream_unavailable", "busy")))).rejects.toThrow("busy");
    expect((await store.once("s", "e", "payload", ok)).value).toBe("answer 4");
  });

  it("once the write is journaled its error is kept as the error it is (kind, message, details), and a retry runs nothing", async () => {
    let runs = 0;
    const timedOut = async ({ journaled }: ClaimHooks): Promise<string> => {
      runs++;
      journaled();
      throw new GatewayError("upstream_unavailable", "accepted but not mined in time", { details: { queueId: "q-7" } });
    };
    for (let i = 0; i < 2; i++) {
      const err = await store.once("j", "wait", "payload", timedOut).catch((e: unknown) => e as GatewayError);
      expect(err).toBeInstanceOf(GatewayError);
      const e = err as GatewayError;
      expect([e.kind, e.message, e.details]).toEqual(["upstream_unavailable", "accepted but not mined in time", { queueId: "q-7" }]);
    }
    expect(runs).toBe(1);
    // Anything else thrown after journaling is kept as an internal error, not cleared for a retry that would send again.
    const broken = async ({ journaled }: ClaimHooks): Promise<string> => {
      runs++;
      journaled();
      throw new Error("answer lost");
    };
    for (let i = 0; i < 2; i++) await expect(store.once("j", "throw", "payload", broken)).rejects.toMatchObject({ kind: "internal" });
    expect(runs).toBe(2);
    // A revert keeps the node's own JSON-RPC code.
    const reverted = async ({ journaled }: ClaimHooks): Promise<string> => {
      runs++;
      journaled();
      throw new GatewayError("execution_reverted", "execution reverted: sold out", { jsonRpcCode: 3 });
    };
    for (let i = 0; i < 2; i++)
      await expect(store.once("j", "revert", "payload", reverted)).rejects.toMatchObject({
        kind: "execution_reverted",
        message: "execution reverted: sold out",
        jsonRpcCode: 3,
      });
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
    const write = async ({ journalKey }: ClaimHooks) => `ran ${++runs} under ${journalKey.split("\n").slice(0, 2).join("/")}`;
    expect(await settling.once("crash", "before", "payload", write)).toEqual({ value: "ran 1 under crash/before", replayed: false });
    expect(await settling.once("crash", "before", "payload", write)).toEqual({ value: "ran 1 under crash/before", replayed: true });
    for (let i = 0; i < 2; i++) {
      const told = await settling.once("crash", "after", "payload", write).catch((e: unknown) => e as GatewayError);
      expect(told).toMatchObject({ kind: "upstream_unavailable", details: { queueId: "q-1", hash: "0xabc" } });
      expect((told as GatewayError).message).toContain("q-1");
    }
    expect(runs).toBe(1);
    // A fresh claim is not stale: its request may still be running.
    await table.claim("crash", "running", new Date(0), fingerprintOf("payload"));
    const waiting = settling.once("crash", "running", "payload", write);
    await new Promise((r) => setTimeout(r, 200));
    await table.answer("crash", "running", 200, "the first answer");
    expect(await waiting).toEqual({ value: "the first answer", replayed: true });
    expect(runs).toBe(1);
  });

  it("a duplicate that waits past its limit is told the first is still in progress (409), as a typed error", async () => {
    const impatient = new IdempotencyStore(table, { waitMs: 100 });
    await table.claim("slow", "k", new Date(0), fingerprintOf("payload"));
    await expect(impatient.once("slow", "k", "payload", async () => "never")).rejects.toMatchObject({ kind: "idempotency_in_progress", httpStatus: 409 });
  });

  it("the same key with another payload is refused with 422, not given the first answer; the first stays", async () => {
    let runs = 0;
    const write = async ({ journaled }: ClaimHooks) => {
      journaled();
      return `sent ${++runs}`;
    };
    expect(await store.once("m", "k", '{"arguments":"a"}', write)).toEqual({ value: "sent 1", replayed: false });
    await expect(store.once("m", "k", '{"arguments":"b"}', write)).rejects.toMatchObject({ kind: "idempotency_mismatch", httpStatus: 422 });
    expect(await store.once("m", "k", '{"arguments":"a"}', write)).toEqual({ value: "sent 1", replayed: true });
    expect(runs).toBe(1);
  });

  it("prune forgets answers older than 24 h and keeps the rest", async () => {
    await store.once("p", "old", "payload", async () => "old");
    await backend.age("p", "old", 25 * 3_600_000);
    await store.once("p", "new", "payload", async () => "new");
    expect(await store.prune()).toBe(1);
    expect(await table.read("p", "old")).toBeUndefined();
    expect(await table.read("p", "new")).toMatchObject({ status: 200, body: "new" });
  });
});
