// A fresh schema in the machine's PostgreSQL (127.0.0.1:5432, database test) per test, so suites never
// see each other's tables.
import pg from "pg";
import { randomBytes } from "node:crypto";

export const PG_BASE = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

export async function freshSchemaUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = "cgw_" + randomBytes(6).toString("hex");
  const admin = new pg.Client({ connectionString: PG_BASE });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return {
    url: `${PG_BASE}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const c = new pg.Client({ connectionString: PG_BASE });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}
