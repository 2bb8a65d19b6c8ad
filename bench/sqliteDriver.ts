// A/B of the embedded journal's SQLite driver: node:sqlite (built in, used) against better-sqlite3 (the
// native addon it replaced), the journal's own statements on the journal's own schema, in one process.
// better-sqlite3 is no longer a dependency: `npm i --no-save better-sqlite3@12` first, then
// `npm run bench:sqlite`. Workload per round: one group commit (a lane update and GROUP inserts in a
// transaction), then the same records' status flush (one transaction of GROUP updates), then GROUP reads.
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEmbeddedDatabase } from "../src/store/embeddedDatabase.js";

const GROUP = 32;
const ROUNDS = Number(process.env.ROUNDS ?? 2000);

interface Driver {
  exec(sql: string): void;
  prepare(sql: string): { run(...p: unknown[]): unknown; get(...p: unknown[]): unknown };
  close(): void;
}

function workload(db: Driver, label: string): number {
  const insert = db.prepare(
    `insert into submissions (queue_id, network, signer, nonce, hash, raw, kind, status, error_message, created_at, processed_at, idempotency_key)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const setLane = db.prepare(
    "insert into nonce_lanes (network, signer, next_nonce) values (?, ?, ?) on conflict (network, signer) do update set next_nonce = max(next_nonce, excluded.next_nonce)",
  );
  const status = db.prepare("update submissions set status = ?, processed_at = coalesce(?, processed_at) where queue_id = ?");
  const get = db.prepare("select * from submissions where queue_id = ?");
  const begin = db.prepare("begin");
  const commit = db.prepare("commit");
  const raw = `0x${"ab".repeat(120)}`;
  let nonce = 0;
  const start = process.hrtime.bigint();
  for (let round = 0; round < ROUNDS; round++) {
    const ids: string[] = [];
    begin.run();
    setLane.run("bench", "0xsigner", nonce + GROUP);
    for (let i = 0; i < GROUP; i++, nonce++) {
      const id = `${label}-${nonce}`;
      ids.push(id);
      insert.run(id, "bench", "0xsigner", nonce, `0x${nonce.toString(16).padStart(64, "0")}`, raw, "message", "pending", null, Date.now(), null, null);
    }
    commit.run();
    begin.run();
    for (const id of ids) status.run("completed", Date.now(), id);
    commit.run();
    for (const id of ids) get.get(id);
  }
  return Number(process.hrtime.bigint() - start) / 1e3 / (ROUNDS * GROUP);
}

const require = createRequire(import.meta.url);
let BetterSqlite: (new (file: string) => Driver & { pragma(s: string): unknown }) | undefined;
try {
  BetterSqlite = require("better-sqlite3");
} catch {
  console.error("better-sqlite3 is not installed: npm i --no-save better-sqlite3@12 (node:sqlite alone is measured)");
}

const rows: string[] = [];
// Alternate, twice each, so neither driver always runs on a warmer machine.
for (let pass = 0; pass < 2; pass++) {
  const nodeDb = openEmbeddedDatabase(mkdtempSync(join(tmpdir(), "sqlite-ab-")));
  rows.push(`| node:sqlite | ${pass + 1} | ${workload(nodeDb as unknown as Driver, "n").toFixed(2)} |`);
  nodeDb.close();
  if (BetterSqlite) {
    // The same schema, made by the same migration, then opened by the other driver with the same pragmas.
    const dir = mkdtempSync(join(tmpdir(), "sqlite-ab-"));
    openEmbeddedDatabase(dir).close();
    const betterDb = new BetterSqlite(join(dir, "journal.sqlite"));
    betterDb.pragma("journal_mode = WAL");
    betterDb.pragma("synchronous = NORMAL");
    rows.push(`| better-sqlite3 | ${pass + 1} | ${workload(betterDb, "b").toFixed(2)} |`);
    betterDb.close();
  }
}
console.log(`Node ${process.version}, ${ROUNDS} rounds of ${GROUP} records (insert in a group commit, status flush, read)\n`);
console.log("| driver | pass | µs per record |\n|---|---|---|");
for (const r of rows) console.log(r);
