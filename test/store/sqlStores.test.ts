// The store suite: migrations are idempotent and the journal round-trips, on PostgreSQL and on the embedded
// SQLite file.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlClient, type SqlClient } from "../../src/store/sqlClient.js";
import { migrate } from "../../src/store/migrations.js";
import { SqlSubmissionStore } from "../../src/store/sqlSubmissionStore.js";
import { SqliteSubmissionStore } from "../../src/store/sqliteSubmissionStore.js";
import type { LaneReservation, SubmissionRecord, SubmissionStore } from "../../src/store/submissionStore.js";
import { randomUUID } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { freshSchemaUrl } from "../helpers/postgres.js";
import { openStores } from "../../src/store/openStores.js";

for (const kind of ["postgres", "sqlite"] as const) {
  describe(`SQL store (${kind})`, () => {
    let db: SqlClient;
    let sqlite: SqliteSubmissionStore | undefined;
    let drop: (() => Promise<void>) | undefined;
    /** The journal under test: SQLite's own, or the SQL one over the client. */
    const journal = (): SubmissionStore & Pick<SqlSubmissionStore, "countBySignerSince"> => sqlite ?? new SqlSubmissionStore(db);
    afterAll(async () => {
      await sqlite?.close();
      await db?.close();
      await drop?.();
    });

    it("migrates once, and again is a no-op", async () => {
      if (kind === "sqlite") {
        // Its schema, versioned by the file: a reopen finds it in place.
        const dataDir = mkdtempSync(join(tmpdir(), "store-"));
        await (await SqliteSubmissionStore.open(dataDir)).close();
        sqlite = await SqliteSubmissionStore.open(dataDir);
        return;
      }
      if (kind === "postgres") {
        const s = await freshSchemaUrl();
        drop = s.drop;
        db = await openSqlClient({ databaseUrl: s.url });
      }
      expect(db.kind).toBe(kind);
      expect(await migrate(db)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      expect(await migrate(db)).toEqual([]);
    });

    it("journals a submission and follows its status", async () => {
      const store = journal();
      const rec: SubmissionRecord = {
        queueId: "7f0c2b8e-0000-4000-8000-000000000001",
        network: "testnet",
        signer: "0xabc",
        nonce: 12,
        hash: "0x01",
        raw: "0x02",
        kind: "message",
        status: "pending",
        createdAt: new Date("2026-01-01T00:00:00Z"),
        idempotencyKey: "k1",
      };
      await store.insert(rec);
      await expect(store.insert(rec)).rejects.toThrow();
      expect(await store.get(rec.queueId)).toEqual(rec);
      expect((await store.listByStatus("testnet", "pending", 10)).map((r) => r.queueId)).toEqual([rec.queueId]);
      // Periodic recovery asks only for records older than a cutoff.
      expect(await store.listByStatus("testnet", "pending", 10, new Date("2026-01-01T00:00:00Z"))).toEqual([]);
      expect(await store.listUnfinished("testnet", 10, new Date("2026-01-01T00:00:00Z"))).toEqual([]);
      expect((await store.listUnfinished("testnet", 10, new Date("2026-01-01T00:00:01Z"))).map((r) => r.queueId)).toEqual([rec.queueId]);
      const done = new Date("2026-01-01T00:00:05Z");
      await store.update(rec.queueId, { status: "completed", processedAt: done });
      expect(await store.get(rec.queueId)).toEqual({ ...rec, status: "completed", processedAt: done });
      // A late "processing" mark (broadcast bookkeeping) never undoes "completed".
      await store.update(rec.queueId, { status: "processing" });
      expect((await store.get(rec.queueId))?.status).toBe("completed");
      expect(await store.listByStatus("testnet", "pending", 10)).toEqual([]);
      expect(await store.get("nope")).toBeUndefined();
      // "processing" is written late; mined first, the mark is dropped and "completed" stands.
      const { idempotencyKey: _, ...plain } = rec;
      const [mined, broadcast] = [
        { ...plain, queueId: randomUUID(), nonce: 13, hash: "0x03" },
        { ...plain, queueId: randomUUID(), nonce: 14, hash: "0x04" },
      ];
      await store.insert(mined);
      await store.insert(broadcast);
      const markMined = store.update(mined.queueId, { status: "processing" });
      const markBroadcast = store.update(broadcast.queueId, { status: "processing" });
      await store.update(mined.queueId, { status: "completed", processedAt: done });
      await Promise.all([markMined, markBroadcast]);
      expect((await store.get(mined.queueId))?.status).toBe("completed");
      expect((await store.get(broadcast.queueId))?.status).toBe("processing");
    });

    it("lists the newest records of a status first, at most the limit asked", async () => {
      const store = journal();
      const at = (s: number) => new Date(Date.UTC(2026, 5, 1, 0, 0, s));
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      for (const [i, queueId] of ids.entries())
        await store.insert({
          queueId,
          network: "newest",
          signer: "0xabc",
          nonce: i,
          hash: `0x1${i}`,
          raw: "0x",
          kind: "message",
          status: "completed",
          createdAt: at(i),
        });
      await store.insert({
        queueId: randomUUID(),
        network: "newest",
        signer: "0xabc",
        nonce: 3,
        hash: "0x13",
        raw: "0x",
        kind: "message",
        status: "pending",
        createdAt: at(9),
      });
      expect((await store.listNewest("newest", "completed", 2)).map((r) => r.queueId)).toEqual([ids[2], ids[1]]);
      expect((await store.listNewest("newest", "completed", 10)).map((r) => r.nonce)).toEqual([2, 1, 0]);
    });

    it("finds a caller-signed submission by hash through an index; the sequencer's own are not indexed by hash", async () => {
      const store = journal();
      const rec: SubmissionRecord = {
        queueId: randomUUID(),
        network: "byhash",
        signer: "0xabc",
        nonce: 1,
        hash: "0xfeed",
        raw: "0x02",
        kind: "raw",
        status: "pending",
        createdAt: new Date(),
      };
      await store.insert(rec);
      await store.insert({ ...rec, queueId: randomUUID(), hash: "0xcafe", kind: "message" });
      expect(await store.getRawByHash("byhash", "0xfeed")).toEqual(rec);
      expect(await store.getRawByHash("byhash", "0xbeef")).toBeUndefined();
      expect(await store.getRawByHash("byhash", "0xcafe")).toBeUndefined();
      const query = "select * from submissions where network = 'byhash' and hash = '0xfeed' and kind = 'raw'";
      if (kind === "sqlite") {
        const plan = (store as unknown as { db: { prepare(s: string): { all(): { detail: string }[] } } }).db.prepare(`explain query plan ${query}`).all();
        expect(plan.map((r) => r.detail).join("\n")).toMatch(/submissions_raw_hash/);
        return;
      }
      // With scans disallowed the planner must use an index; without one it would still have to scan.
      const plan = await db.transaction(async (tx) => {
        await tx.query("set local enable_seqscan = off");
        return tx.query<{ "QUERY PLAN": string }>(`explain ${query}`);
      });
      expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/submissions_raw_hash/);
    });

    it("finds the record journaled under an Idempotency-Key claim's journal key", async () => {
      const store = journal();
      const rec: SubmissionRecord = {
        queueId: randomUUID(),
        network: "idem",
        signer: "0xabc",
        nonce: 1,
        hash: "0x0d",
        raw: "0x02",
        kind: "message",
        status: "pending",
        createdAt: new Date(),
        idempotencyKey: "zkt:testnet:public:1.2.3.4\norder-7\n1795000000000",
      };
      await store.insert(rec);
      expect(await store.getByIdempotencyKey(rec.idempotencyKey!)).toEqual(rec);
      expect(await store.getByIdempotencyKey("zkt:testnet:public:1.2.3.4\norder-7\n1795000000001")).toBeUndefined();
    });

    it("one group commit for several lanes: consecutive nonces per signer, all or nothing", async () => {
      const store = journal();
      const record = (signer: string, nonce: number): SubmissionRecord => ({
        queueId: randomUUID(),
        network: "lanes",
        signer,
        nonce,
        hash: `0x${signer}${nonce}`,
        raw: "0x02",
        kind: "message",
        status: "pending",
        createdAt: new Date(),
      });
      const lane = (signer: string, chainPending: number, count: number, fail = false): LaneReservation => ({
        signer,
        chainPending,
        count,
        build: async (nonces) => {
          if (fail) throw new Error("signing failed");
          return nonces.map((n) => record(signer, n));
        },
      });
      const [a, b] = await store.reserveAndInsertLanes("lanes", [lane("0xbb", 5, 3), lane("0xaa", 0, 2)]);
      expect(a!.map((r) => r.nonce)).toEqual([5, 6, 7]);
      expect(b!.map((r) => r.nonce)).toEqual([0, 1]);
      // One lane failing journals and reserves nothing for any lane.
      await expect(store.reserveAndInsertLanes("lanes", [lane("0xaa", 0, 1), lane("0xbb", 0, 1, true)])).rejects.toThrow(/signing failed/);
      const [a2, b2] = await store.reserveAndInsertLanes("lanes", [lane("0xaa", 0, 1), lane("0xbb", 0, 1)]);
      expect([a2![0]!.nonce, b2![0]!.nonce]).toEqual([2, 8]);
      expect((await store.listUnfinished("lanes", 100)).map((r) => `${r.signer}:${r.nonce}`)).toEqual([
        "0xaa:0",
        "0xaa:1",
        "0xaa:2",
        "0xbb:5",
        "0xbb:6",
        "0xbb:7",
        "0xbb:8",
      ]);
      // The chain ahead of the lane (another wallet user): the lane jumps to the chain's pending nonce.
      const [a3] = await store.reserveAndInsertLanes("lanes", [lane("0xaa", 20, 2)]);
      expect(a3!.map((r) => r.nonce)).toEqual([20, 21]);
    });

    it("a write whose nonce the node spent moves to its lane's next nonce: same queueId, new bytes, pending again", async () => {
      const store = journal();
      const lane = (chainPending: number, count: number): LaneReservation => ({
        signer: "0xcc",
        chainPending,
        count,
        build: async (nonces) =>
          nonces.map((nonce) => ({
            queueId: randomUUID(),
            network: "move",
            signer: "0xcc",
            nonce,
            hash: `0xold${nonce}`,
            raw: "0x02",
            kind: "message" as const,
            status: "pending" as const,
            createdAt: new Date(),
          })),
      });
      const [recs] = await store.reserveAndInsertLanes("move", [lane(0, 3)]);
      await store.update(recs![0]!.queueId, { status: "error", errorMessage: "nonce too low", processedAt: new Date() });
      const moved = await store.moveToNextNonce(recs![0]!.queueId, 0, async (nonce) => ({ hash: `0xnew${nonce}`, raw: "0x03" }));
      expect(moved).toMatchObject({ queueId: recs![0]!.queueId, nonce: 3, hash: "0xnew3", raw: "0x03", status: "pending" });
      expect(await store.get(recs![0]!.queueId)).toMatchObject({ nonce: 3, hash: "0xnew3", status: "pending" });
      expect((await store.get(recs![0]!.queueId))!.errorMessage).toBeUndefined();
      // The nonce is the lane's: the next commit continues after it; the chain ahead moves it further.
      const [next] = await store.reserveAndInsertLanes("move", [lane(0, 1)]);
      expect(next![0]!.nonce).toBe(4);
      expect((await store.moveToNextNonce(recs![1]!.queueId, 9, async (n) => ({ hash: `0xnew${n}`, raw: "0x03" }))).nonce).toBe(9);
      // A failed build moves and reserves nothing.
      await expect(store.moveToNextNonce(recs![2]!.queueId, 0, async () => Promise.reject(new Error("signing failed")))).rejects.toThrow(/signing/);
      expect((await store.get(recs![2]!.queueId))!.nonce).toBe(2);
      expect((await store.moveToNextNonce(recs![2]!.queueId, 0, async (n) => ({ hash: `0xnew${n}`, raw: "0x03" }))).nonce).toBe(10);
    });

    it("prune deletes finished records created before the cutoff, never unfinished ones", async () => {
      const store = journal();
      // Older than anything else this suite journals: the prune spans every network.
      const old = new Date("2020-01-01T00:00:00Z");
      const cutoff = new Date("2020-02-01T00:00:00Z");
      const rec = (status: SubmissionRecord["status"], processedAt?: Date, createdAt = old): SubmissionRecord => ({
        queueId: randomUUID(),
        network: "prune",
        signer: "0xp",
        nonce: 0,
        hash: `0x${randomUUID()}`,
        raw: "0x02",
        kind: "message",
        status,
        createdAt,
        ...(processedAt ? { processedAt } : {}),
      });
      const recent = new Date("2020-03-01T00:00:00Z");
      // Age counts from creation: one finished after the cutoff goes too.
      const gone = [rec("completed", old), rec("completed", recent), rec("error"), { ...rec("completed", old), network: "prune-2" }];
      const kept = [rec("pending"), rec("processing"), rec("completed", recent, recent), rec("error", undefined, recent)];
      for (const r of [...gone, ...kept]) await store.insert(r);
      expect(await store.prune(cutoff)).toBe(4);
      for (const r of gone) expect(await store.get(r.queueId)).toBeUndefined();
      for (const r of kept) expect((await store.get(r.queueId))?.status).toBe(r.status);
    });

    it("concurrent group commits over overlapping lanes, in any order: no nonce twice, none skipped, no deadlock", async () => {
      const store = journal();
      const signers = ["0xc1", "0xc2", "0xc3", "0xc4"];
      const lane = (signer: string): LaneReservation => ({
        signer,
        chainPending: 0,
        count: 2,
        build: async (nonces) =>
          nonces.map((nonce) => ({
            queueId: randomUUID(),
            network: "race",
            signer,
            nonce,
            hash: `0x${signer}${nonce}`,
            raw: "0x02",
            kind: "message",
            status: "pending",
            createdAt: new Date(),
          })),
      });
      // On PostgreSQL these run on separate pooled connections, so the row locks really contend.
      await Promise.all(Array.from({ length: 12 }, (_, i) => store.reserveAndInsertLanes("race", (i % 2 ? [...signers].reverse() : signers).map(lane))));
      const bySigner = new Map<string, number[]>();
      for (const r of await store.listUnfinished("race", 1_000)) bySigner.set(r.signer, [...(bySigner.get(r.signer) ?? []), r.nonce]);
      for (const s of signers) expect(bySigner.get(s)).toEqual(Array.from({ length: 24 }, (_, n) => n));
    });
  });
}

describe("SQLite journal (embedded)", () => {
  const record = (signer: string, nonce: number, status: SubmissionRecord["status"] = "pending"): SubmissionRecord => ({
    queueId: randomUUID(),
    network: "sq",
    signer,
    nonce,
    hash: `0x${signer}${nonce}`,
    raw: "0x02",
    kind: "message",
    status,
    createdAt: new Date("2026-02-01T00:00:00Z"),
  });
  const lane = (signer: string, count: number, opts: { chainPending?: number; queueId?: string } = {}): LaneReservation => ({
    signer,
    chainPending: opts.chainPending ?? 0,
    count,
    build: async (nonces) => nonces.map((nonce) => ({ ...record(signer, nonce), ...(opts.queueId ? { queueId: opts.queueId } : {}) })),
  });

  it("a failed commit consumes no nonce, and a reopened journal continues where it stopped", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "journal-sqlite-"));
    let store = await SqliteSubmissionStore.open(dataDir);
    const [first] = await store.reserveAndInsertLanes("sq", [lane("0xd1", 3)]);
    // A queueId already journaled fails the insert after the nonces were picked: lanes and records roll back.
    await expect(store.reserveAndInsertLanes("sq", [lane("0xd2", 1), lane("0xd1", 1, { queueId: first![0]!.queueId })])).rejects.toThrow(/UNIQUE/);
    const [second, other] = await store.reserveAndInsertLanes("sq", [lane("0xd1", 1), lane("0xd2", 1)]);
    expect([...first!, ...second!].map((r) => r.nonce)).toEqual([0, 1, 2, 3]);
    expect(other!.map((r) => r.nonce)).toEqual([0]);
    await store.close();

    store = await SqliteSubmissionStore.open(dataDir);
    const [after] = await store.reserveAndInsertLanes("sq", [lane("0xd1", 2)]);
    expect(after!.map((r) => r.nonce)).toEqual([4, 5]);
    const [ahead] = await store.reserveAndInsertLanes("sq", [lane("0xd1", 1, { chainPending: 40 })]);
    expect(ahead![0]!.nonce).toBe(40);
    expect((await store.listUnfinished("sq", 100)).filter((r) => r.signer === "0xd1").map((r) => r.nonce)).toEqual([0, 1, 2, 3, 4, 5, 40]);
    expect(await store.countBySignerSince("0xd1", new Date("2026-01-01T00:00:00Z"))).toBe(7);
    await store.close();
  });

  it("a close writes the status changes still waiting for their batch", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "journal-sqlite-close-"));
    let store = await SqliteSubmissionStore.open(dataDir);
    const rec = record("0xf1", 0);
    await store.insert(rec);
    const done = new Date("2026-02-01T00:00:09Z");
    const marked = store.update(rec.queueId, { status: "completed", processedAt: done });
    await store.close();
    await marked;
    store = await SqliteSubmissionStore.open(dataDir);
    expect(await store.get(rec.queueId)).toEqual({ ...rec, status: "completed", processedAt: done });
    await store.close();
  });

  it("a journal of schema version 1 is migrated in place when opened", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "journal-sqlite-v1-"));
    const v1 = new DatabaseSync(join(dataDir, "journal.sqlite"));
    v1.exec(`create table submissions (queue_id text primary key, network text not null, signer text not null, nonce integer not null, hash text not null, raw text not null,
      kind text not null, status text not null, error_message text, created_at integer not null, processed_at integer, idempotency_key text);
      create table nonce_lanes (network text not null, signer text not null, next_nonce integer not null, primary key (network, signer)) without rowid;
      pragma user_version = 1;`);
    v1.close();
    const store = await SqliteSubmissionStore.open(dataDir);
    const [recs] = await store.reserveAndInsertLanes("sq", [lane("0xf9", 1)]);
    expect(recs!.map((r) => r.nonce)).toEqual([0]);
    await store.close();
  });

  it("one gateway per data directory: a second is refused while the first has it; a tool (the keys CLI) is not", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "journal-sqlite-lock-"));
    const gateway = await openStores({ dataDir });
    await expect(openStores({ dataDir })).rejects.toThrow(/data directory .* is in use by another gateway: one gateway per DATA_DIR/);
    const tool = await openStores({ dataDir, role: "tool" });
    // Both write the same file: a key the tool adds is there for the gateway at once.
    await tool.keys.insert({
      id: "k1",
      prefix: "cgw_k1",
      keyHash: "h1",
      label: "",
      requestsPerMinute: null,
      transactionsPerDay: null,
      writesPerMonth: null,
      allowedTargets: null,
    });
    expect((await gateway.keys.byHash("h1"))?.walletIndex).toBe(1);
    await tool.close();
    await gateway.close();
    await (await openStores({ dataDir })).close();
  });
});
