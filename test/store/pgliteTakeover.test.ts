// Upgrading a data directory of the versions that kept their store in PGlite: the journal, keys and
// Idempotency-Key answers move into the SQLite file once, and PGlite is not opened again.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { openSqlClient } from "../../src/store/sqlClient.js";
import { migrate } from "../../src/store/migrations.js";
import { SqlSubmissionStore } from "../../src/store/sqlSubmissionStore.js";
import { SqliteSubmissionStore } from "../../src/store/sqliteSubmissionStore.js";
import { openStores } from "../../src/store/openStores.js";
import { holdDataDir, openEmbeddedDatabase } from "../../src/store/embeddedDatabase.js";
import { sqlKeyTable } from "../../src/store/keyTable.js";
import { sqlIdempotencyTable } from "../../src/store/idempotencyTable.js";
import { ApiKeys } from "../../src/keys/apiKeys.js";
import { MasterSeed } from "../../src/keys/masterSeed.js";
import { pgliteDataDir } from "../helpers/pglite.js";
import type { LaneReservation, SubmissionRecord } from "../../src/store/submissionStore.js";

const record = (signer: string, nonce: number): SubmissionRecord => ({ queueId: randomUUID(), network: "sq", signer, nonce, hash: `0x${signer}${nonce}`, raw: "0x02", kind: "message", status: "pending", createdAt: new Date("2026-02-01T00:00:00Z") });
const lane = (signer: string, count: number, chainPending = 0): LaneReservation => ({ signer, chainPending, count, build: async (nonces) => nonces.map((nonce) => record(signer, nonce)) });

/** An earlier version's data directory: its PGlite store, migrated, handed to `fill`, then closed. */
async function oldDataDir(fill: (db: Awaited<ReturnType<typeof openSqlClient>>) => Promise<void>): Promise<string> {
  const dataDir = pgliteDataDir("takeover-");
  const db = await openSqlClient({ dataDir });
  await migrate(db);
  await fill(db);
  await db.close();
  return dataDir;
}

/** Opens the stores, noting whether PGlite was taken over this time. */
async function open(dataDir: string) {
  const changes: string[] = [];
  const stores = await openStores({ dataDir, onChange: (what) => changes.push(what) });
  return { stores, tookOver: changes.includes("earlier embedded store taken over") };
}

describe("taking over an earlier version's PGlite store", () => {
  it("the journal: records, statuses and nonce lanes, once; the old journal is emptied", async () => {
    let recs: SubmissionRecord[] = [];
    const raw: SubmissionRecord = { ...record("0xuser", 3), kind: "raw", idempotencyKey: "idem-1" };
    const dataDir = await oldDataDir(async (db) => {
      const old = new SqlSubmissionStore(db);
      [recs] = (await old.reserveAndInsertLanes("sq", [lane("0xe1", 3, 7)])) as [SubmissionRecord[]];
      await old.update(recs[0]!.queueId, { status: "error", errorMessage: "the node rejected the transaction: nope", processedAt: new Date("2026-02-01T00:00:01Z") });
      await old.insert(raw);
      await old.close();
    });
    const { stores, tookOver } = await open(dataDir);
    expect(tookOver).toBe(true);
    const store = stores.journal;
    expect(await store.get(recs[0]!.queueId)).toEqual({ ...recs[0]!, status: "error", errorMessage: "the node rejected the transaction: nope", processedAt: new Date("2026-02-01T00:00:01Z") });
    expect(await store.get(recs[2]!.queueId)).toEqual(recs[2]);
    expect(await store.getRawByHash("sq", raw.hash)).toEqual(raw);
    expect((await store.listUnfinished("sq", 100)).map((r) => `${r.signer}:${r.nonce}`)).toEqual(["0xe1:8", "0xe1:9", "0xuser:3"]);
    // The lane carries on after the imported nonces, though the chain reports less.
    const [next] = await store.reserveAndInsertLanes("sq", [lane("0xe1", 1)]);
    expect(next![0]!.nonce).toBe(10);
    await stores.close();

    // One journal from now on: the old one is emptied, and a reopen neither opens PGlite nor imports again.
    const db = await openSqlClient({ dataDir });
    expect(await db.query("select * from submissions")).toEqual([]);
    expect(await db.query("select * from nonce_lanes")).toEqual([]);
    const late = record("0xlate", 0);
    await new SqlSubmissionStore(db).insert(late);
    await db.close();
    const reopened = await open(dataDir);
    expect(reopened.tookOver).toBe(false);
    expect(await reopened.stores.journal.get(late.queueId)).toBeUndefined();
    await reopened.stores.close();
  });

  it("keys, revoked ones included, with their wallets and limits, and Idempotency-Key answers", async () => {
    let seed!: MasterSeed;
    let kept = "";
    let revokedKey = "";
    const dataDir = await oldDataDir(async (db) => {
      seed = MasterSeed.load(mkdtempSync(join(tmpdir(), "takeover-seed-")), {});
      const keys = new ApiKeys(sqlKeyTable(db), seed);
      kept = (await keys.create({ label: "kept", requestsPerMinute: 600, transactionsPerDay: 50 })).apiKey;
      const revoked = await keys.create({ label: "revoked" });
      revokedKey = revoked.apiKey;
      await keys.revoke(revoked.info.id);
      const answers = sqlIdempotencyTable(db);
      await answers.claim("zkt:key", "k1", new Date(0), "fingerprint");
      await answers.answer("zkt:key", "k1", 200, '{"success":true}');
    });
    const { stores, tookOver } = await open(dataDir);
    expect(tookOver).toBe(true);
    const keys = new ApiKeys(stores.keys, seed);
    expect(await keys.authenticate(kept)).toMatchObject({ kind: "key", walletIndex: 1, requestsPerMinute: 600, transactionsPerDay: 50 });
    await expect(keys.authenticate(revokedKey)).rejects.toThrow(/revoked/);
    expect((await keys.list()).map((k) => [k.label, k.walletIndex, k.revokedAt !== null])).toEqual([
      ["revoked", 2, true],
      ["kept", 1, false],
    ]);
    // A new key's wallet is a new one, past both.
    expect((await keys.create({ label: "new" })).info.walletIndex).toBe(3);
    expect(await stores.idempotency.read("zkt:key", "k1")).toMatchObject({ status: 200, body: '{"success":true}' });
    await stores.close();
    const reopened = await open(dataDir);
    expect(reopened.tookOver).toBe(false);
    expect((await reopened.stores.keys.walletIndexes())).toEqual([1, 2, 3]);
    await reopened.stores.close();
  });

  it("the keys CLI (a tool) that meets an earlier store takes it over too, holding the data directory meanwhile", async () => {
    let apiKey = "";
    const seedDir = mkdtempSync(join(tmpdir(), "takeover-tool-seed-"));
    const dataDir = await oldDataDir(async (db) => {
      apiKey = (await new ApiKeys(sqlKeyTable(db), MasterSeed.load(seedDir, {})).create({ label: "old" })).apiKey;
    });
    const tool = await openStores({ dataDir, role: "tool" });
    // A gateway starting while the tool has it waits its turn (is refused), as during any take-over.
    await expect(openStores({ dataDir })).rejects.toThrow(/in use by another gateway/);
    expect((await new ApiKeys(tool.keys, MasterSeed.load(seedDir, {})).authenticate(apiKey)).kind).toBe("key");
    await tool.close();
    // Taken over, a tool no longer holds the directory: a gateway and a tool open it side by side.
    const gateway = await open(dataDir);
    expect(gateway.tookOver).toBe(false);
    const again = await openStores({ dataDir, role: "tool" });
    await again.close();
    await gateway.stores.close();
  });

  it("a take-over cut off part way starts again on the next open, skipping what it copied", async () => {
    const [copied, notYet] = [record("0xe2", 0), record("0xe2", 1)];
    const dataDir = await oldDataDir(async (db) => {
      const old = new SqlSubmissionStore(db);
      await old.insert(copied);
      await old.insert(notYet);
    });
    // As if the first take-over had copied one record when the process died.
    const partial = await SqliteSubmissionStore.open(dataDir);
    await partial.insert(copied);
    await partial.close();
    const { stores } = await open(dataDir);
    expect((await stores.journal.listUnfinished("sq", 10)).map((r) => r.queueId)).toEqual([copied.queueId, notYet.queueId]);
    await stores.close();
  });

  it("an earlier store that cannot be read stops the start with a message naming it, and changes nothing", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "takeover-broken-"));
    mkdirSync(join(dataDir, "pglite"));
    writeFileSync(join(dataDir, "pglite", "PG_VERSION"), "17\n");
    await expect(openStores({ dataDir })).rejects.toThrow(/cannot read the earlier embedded store in .*pglite to take it over .*repair or restore that directory/);
    // Nothing holds the data directory afterwards, and nothing was taken over.
    const db = openEmbeddedDatabase(dataDir);
    expect(db.prepare("select count(*) as n from journal_meta").get()).toEqual({ n: 0 });
    db.close();
    const release = holdDataDir(dataDir);
    release();
  }, 30_000);

  it("a new data directory has no PGlite store and opens none (nothing creates one)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "takeover-none-"));
    const { stores, tookOver } = await open(dataDir);
    expect(tookOver).toBe(false);
    expect(stores.kind).toBe("embedded");
    await stores.close();
    await expect(openSqlClient({ dataDir })).rejects.toThrow(/no PGlite store in .*pglite$/);
    expect(existsSync(join(dataDir, "pglite"))).toBe(false);
  });
});
