// The API key table, the same on the embedded SQLite file and on PostgreSQL: wallet indexes, lookups, a
// case-sensitive literal prefix search, and revocation that keeps its first time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStores, type Stores } from "../../src/store/openStores.js";
import type { KeyTable, NewKeyRow } from "../../src/store/keyTable.js";
import { freshSchemaUrl } from "../helpers/postgres.js";

const key = (n: number, prefix: string): NewKeyRow => ({
  id: `id-${n}`,
  prefix,
  keyHash: `hash-${n}`,
  label: `key ${n}`,
  requestsPerMinute: n === 1 ? 600 : null,
  transactionsPerDay: null,
  writesPerMonth: null,
  allowedTargets: n === 1 ? ["0x000000000000000000000000000000000000beef", "0x000000000000000000000000000000000000dead"] : null,
});

describe.each(["embedded", "postgres"] as const)("key table (%s)", (kind) => {
  let stores: Stores;
  let table: KeyTable;
  let drop: (() => Promise<void>) | undefined;
  let third = 0;
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "keytable-"));
    if (kind === "postgres") {
      const s = await freshSchemaUrl();
      drop = s.drop;
      stores = await openStores({ dataDir, databaseUrl: s.url });
    } else stores = await openStores({ dataDir });
    expect(stores.kind).toBe(kind);
    table = stores.keys;
  });
  afterAll(async () => {
    await stores?.close();
    await drop?.();
  });

  it("gives each key the next wallet index and finds it by hash and id", async () => {
    const first = await table.insert(key(1, "cgw_AbCd1234"));
    const second = await table.insert(key(2, "cgw_abcd5678"));
    expect([first.walletIndex, second.walletIndex]).toEqual([1, 2]);
    expect(first).toMatchObject({ id: "id-1", prefix: "cgw_AbCd1234", label: "key 1", revokedAt: null, requestsPerMinute: 600, transactionsPerDay: null });
    expect(Math.abs(first.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await table.byHash("hash-2")).toEqual(second);
    expect(await table.byId("id-1")).toEqual(first);
    expect(await table.byHash("nope")).toBeUndefined();
    // A duplicate hash is refused. The index it drew may be skipped (a PostgreSQL sequence), never reused.
    await expect(table.insert({ ...key(3, "cgw_x"), keyHash: "hash-1" })).rejects.toThrow();
    third = (await table.insert(key(4, "cgw_50%_off"))).walletIndex;
    expect(third).toBeGreaterThan(2);
    expect(await table.walletIndexes()).toEqual([1, 2, third]);
  });

  it("searches prefixes literally and case-sensitively, newest first", async () => {
    expect((await table.byPrefix("cgw_AbCd")).map((k) => k.id)).toEqual(["id-1"]);
    expect((await table.byPrefix("cgw_abcd")).map((k) => k.id)).toEqual(["id-2"]);
    expect((await table.byPrefix("cgw_50%")).map((k) => k.id)).toEqual(["id-4"]);
    expect(await table.byPrefix("cgw_%")).toEqual([]);
    expect(await table.byPrefix("cgw__")).toEqual([]);
    expect((await table.byPrefix("")).map((k) => k.id)).toEqual(["id-4", "id-2", "id-1"]);
  });

  it("revokes once: a second revocation keeps the first time", async () => {
    const revoked = await table.revoke("id-2");
    expect(revoked!.revokedAt).toBeInstanceOf(Date);
    await new Promise((r) => setTimeout(r, 5));
    expect((await table.revoke("id-2"))!.revokedAt).toEqual(revoked!.revokedAt);
    expect(await table.revoke("missing")).toBeUndefined();
    expect(await table.walletIndexes()).toEqual([1, 2, third]);
  });
});
