// The embedded store's PGlite worker thread dying: calls in progress and later fail with a clear error instead of
// hanging, the owner hears of it once, and a reopened journal holds everything committed before the crash.
import { describe, it, expect } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlClient } from "../../src/store/sqlClient.js";
import { GatewayError } from "../../src/errors.js";

const crashing = new URL("../fixtures/crashingPgliteWorker.mjs", import.meta.url);

describe("PGlite journal worker crash", () => {
  it("fails waiting and later calls, reports once, and loses nothing committed", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pglite-crash-"));
    const fatal: Error[] = [];
    const db = await openSqlClient({ dataDir, pgliteWorker: crashing, onFatal: (err) => fatal.push(err) });
    await db.query("create table kept (n int)");
    await db.query("insert into kept values (1), (2)");

    // Sent after the crash: already posted to the worker, never answered by it.
    const crash = db.query("-- crash the worker");
    const queuedBehind = db.query("insert into kept values (3)");
    // What callers (and so clients) are told: not a refusal, an unknown outcome.
    const err = await crash.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).message).toMatch(/store stopped during this request, so a write may or may not have been accepted/);
    expect(String((err as GatewayError).cause)).toMatch(/embedded store stopped: its worker thread exited with code 70/);
    await expect(queuedBehind).rejects.toBe(err);
    await expect(db.query("select 1")).rejects.toBe(err);
    await expect(db.transaction(async (tx) => tx.query("select 1"))).rejects.toBe(err);
    expect(fatal).toEqual([err]);
    await db.close();
    expect(fatal).toHaveLength(1);

    const reopened = await openSqlClient({ dataDir });
    expect(await reopened.query<{ n: number }>("select n from kept order by n")).toEqual([{ n: 1 }, { n: 2 }]);
    await reopened.close();
  });

  it("a deliberate close is not reported as a crash", async () => {
    const fatal: Error[] = [];
    const db = await openSqlClient({ dataDir: mkdtempSync(join(tmpdir(), "pglite-close-")), onFatal: (err) => fatal.push(err) });
    await db.query("select 1");
    await db.close();
    expect(fatal).toEqual([]);
  });
});
