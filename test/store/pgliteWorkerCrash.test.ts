// PGlite's worker thread (an earlier version's store, read by the take-over) dying: calls in progress and later
// fail with a clear error instead of hanging, and a reopened store holds everything committed before the crash.
import { describe, it, expect } from "vitest";
import { openSqlClient } from "../../src/store/sqlClient.js";
import { pgliteDataDir } from "../helpers/pglite.js";

const crashing = new URL("../fixtures/crashingPgliteWorker.mjs", import.meta.url);

describe("PGlite worker crash", () => {
  it("fails waiting and later calls, and loses nothing committed", async () => {
    const dataDir = pgliteDataDir("pglite-crash-");
    const db = await openSqlClient({ dataDir, pgliteWorker: crashing });
    await db.query("create table kept (n int)");
    await db.query("insert into kept values (1), (2)");

    // Sent after the crash: already posted to the worker, never answered by it.
    const crash = db.query("-- crash the worker");
    const queuedBehind = db.query("insert into kept values (3)");
    const err = await crash.catch((e: unknown) => e);
    expect(String(err)).toMatch(/the PGlite store stopped: its worker thread exited with code 70/);
    await expect(queuedBehind).rejects.toBe(err);
    await expect(db.query("select 1")).rejects.toBe(err);
    await expect(db.transaction(async (tx) => tx.query("select 1"))).rejects.toBe(err);
    await db.close();

    const reopened = await openSqlClient({ dataDir });
    expect(await reopened.query<{ n: number }>("select n from kept order by n")).toEqual([{ n: 1 }, { n: 2 }]);
    await reopened.close();
  });
});
