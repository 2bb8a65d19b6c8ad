// New embedded stores start from a copy of a pristine PGlite cluster once this user has one: the first runs
// initdb and publishes it, the next is copied, and each is a cluster of its own. A cache directory that others
// can write is never used; a damaged one is dropped.
import { describe, it, expect } from "vitest";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlClient } from "../../src/store/sqlClient.js";
import { createCluster, templateDir } from "../../src/store/pgliteTemplate.js";

const scratch = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));

describe("PGlite cluster template", () => {
  it("the first new store runs initdb and publishes it; the next is a copy, and a cluster of its own", async () => {
    const cacheRoot = join(scratch("pglite-cache-"), "chain-gateway");
    const first = scratch("pglite-first-");
    const db1 = await openSqlClient({ dataDir: first, templateCacheRoot: cacheRoot });
    const template = templateDir(cacheRoot)!;
    expect(template).toMatch(/pglite-\d+\.\d+\.\d+$/);
    expect(existsSync(join(template, "PG_VERSION"))).toBe(true);
    // Only the template itself is left in the cache (no staging copies).
    expect(readdirSync(cacheRoot)).toEqual([template.split("/").pop()]);
    await db1.query("create table only_in_first (n int)");

    const second = scratch("pglite-second-");
    let initdbs = 0;
    const how = await createCluster(join(second, "pglite"), async () => void initdbs++, cacheRoot);
    expect(how).toBe("copied");
    expect(initdbs).toBe(0);
    const db2 = await openSqlClient({ dataDir: second, templateCacheRoot: cacheRoot });
    expect(await db2.query("select 1 as one")).toEqual([{ one: 1 }]);
    // Pristine: taken before the first gateway wrote anything.
    expect(await db2.query("select count(*)::int as n from information_schema.tables where table_name = 'only_in_first'")).toEqual([{ n: 0 }]);
    await Promise.all([db1.close(), db2.close()]);
  });

  it("a cache directory others can write is neither used nor filled", async () => {
    const cacheRoot = join(scratch("pglite-cache-"), "chain-gateway");
    mkdirSync(join(templateDir(cacheRoot)!), { recursive: true });
    mkdirSync(join(templateDir(cacheRoot)!, "PG_VERSION"));
    chmodSync(cacheRoot, 0o777);
    const dir = join(scratch("pglite-untrusted-"), "pglite");
    mkdirSync(dir);
    let initdbs = 0;
    expect(await createCluster(dir, async () => void initdbs++, cacheRoot)).toBe("initdb");
    expect(initdbs).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("PGlite cluster template, damaged", () => {
  it("a copy PGlite cannot open is replaced by initdb, and the damaged template is dropped", async () => {
    const cacheRoot = join(scratch("pglite-cache-"), "chain-gateway");
    mkdirSync(cacheRoot, { mode: 0o700, recursive: true });
    const template = templateDir(cacheRoot)!;
    mkdirSync(template);
    writeFileSync(join(template, "PG_VERSION"), "not a version\n");
    const dataDir = scratch("pglite-damaged-");
    const db = await openSqlClient({ dataDir, templateCacheRoot: cacheRoot });
    expect(await db.query("select 1 as one")).toEqual([{ one: 1 }]);
    await db.close();
    expect(existsSync(template)).toBe(false);
  });
});
