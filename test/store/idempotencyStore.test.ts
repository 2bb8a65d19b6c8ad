// The Idempotency-Key store on embedded PGlite: one run per key, replays, failures leave no trace, and
// answers past their 24 h are pruned.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlClient, type SqlClient } from "../../src/store/sqlClient.js";
import { migrate } from "../../src/store/migrations.js";
import { IdempotencyStore } from "../../src/store/idempotencyStore.js";

describe("IdempotencyStore", () => {
  let db: SqlClient;
  let store: IdempotencyStore;
  beforeAll(async () => {
    db = await openSqlClient({ dataDir: mkdtempSync(join(tmpdir(), "idem-")) });
    await migrate(db);
    store = new IdempotencyStore(db);
  });
  afterAll(() => db?.close());

  it("runs once per scope and key; a failed first attempt can be retried; non-2xx answers are not kept", async () => {
    let runs = 0;
    const ok = async () => ({ status: 200, body: `answer ${++runs}` });
    expect(await store.once("s", "k", ok)).toEqual({ status: 200, body: "answer 1", replayed: false });
    expect(await store.once("s", "k", ok)).toEqual({ status: 200, body: "answer 1", replayed: true });
    expect((await store.once("other scope", "k", ok)).body).toBe("answer 2");
    await expect(store.once("s", "f", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect((await store.once("s", "f", ok)).body).toBe("answer 3");
    expect(await store.once("s", "e", async () => ({ status: 503, body: "busy" }))).toMatchObject({ replayed: false, status: 503 });
    expect((await store.once("s", "e", ok)).body).toBe("answer 4");
  });

  it("once the write is journaled its answer is kept whatever it is, and a retry runs nothing", async () => {
    let runs = 0;
    const timedOut = async (journaled: () => void) => {
      runs++;
      journaled();
      return { status: 503, body: "accepted but not mined in time" };
    };
    expect(await store.once("j", "wait", timedOut)).toEqual({ status: 503, body: "accepted but not mined in time", replayed: false });
    expect(await store.once("j", "wait", timedOut)).toEqual({ status: 503, body: "accepted but not mined in time", replayed: true });
    expect(runs).toBe(1);
    // A throw after journaling is kept as a 500, not cleared for a retry that would send again.
    const broken = async (journaled: () => void): Promise<{ status: number; body: string }> => {
      runs++;
      journaled();
      throw new Error("answer lost");
    };
    expect((await store.once("j", "throw", broken)).status).toBe(500);
    expect(await store.once("j", "throw", broken)).toMatchObject({ status: 500, replayed: true });
    expect(runs).toBe(2);
  });

  it("prune forgets answers older than 24 h and keeps the rest", async () => {
    await store.once("p", "old", async () => ({ status: 200, body: "old" }));
    await db.query("update idempotency set created_at = now() - interval '25 hours' where scope = 'p' and key = 'old'");
    await store.once("p", "new", async () => ({ status: 200, body: "new" }));
    expect(await store.prune()).toBe(1);
    const keys = (await db.query<{ key: string }>("select key from idempotency where scope = 'p' order by key")).map((r) => r.key);
    expect(keys).toEqual(["new"]);
  });
});
