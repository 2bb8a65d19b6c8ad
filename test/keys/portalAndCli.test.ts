// Key issue is rate-limited per IP; the operator CLI creates, lists and revokes keys in the same store, also
// while a gateway runs on it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { freshSchemaUrl } from "../helpers/postgres.js";
import { LOOKUP_CACHE_MS } from "../../src/keys/apiKeys.js";

const run = promisify(execFile);

describe("portal", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.portalKeysPerHour = 2) });
  });
  afterAll(() => gw?.close());

  it("issues at most the configured number of keys per IP, then 429 with Retry-After", async () => {
    const url = gw.network("testnet").url + "/portal/keys";
    expect((await postJson(url, {})).status).toBe(201);
    expect((await postJson(url, "")).status).toBe(201);
    const third = await postJson(url, {});
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(third.json).toMatchObject({ success: false, errorCode: "RATE_LIMITED" });
  });

  it("bad bodies are refused with a clear message", async () => {
    const g2 = await startTestGateway();
    try {
      const url = g2.network("testnet").url + "/portal/keys";
      expect((await postJson(url, { label: 5 })).json).toMatchObject({ error: "label must be a string" });
      expect((await postJson(url, { colour: "red" })).status).toBe(400);
    } finally {
      await g2.close();
    }
  });
});

describe("keys CLI", () => {
  it("works beside a running gateway on the embedded store: a key it creates works at once, one it revokes is refused within 1 s", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cli-live-"));
    const gw = await startTestGateway({ mutate: (c) => void (c.dataDir = dataDir) });
    try {
      const env = { ...process.env, DATA_DIR: dataDir } as Record<string, string>;
      const cli = (...args: string[]) => run("npm", ["run", "--silent", "keys", "--", ...args], { env });
      const key = /api key \(shown once\): (cgw_\S+)/.exec((await cli("create", "--label", "live")).stdout)![1]!;
      const keyed = gw.network("testnet").url + `/zgt/${key}`;
      const chainId = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
      expect((await postJson(keyed, chainId)).json).toMatchObject({ result: "0x133edcb" });
      await cli("revoke", key.slice(0, 12));
      await new Promise((r) => setTimeout(r, LOOKUP_CACHE_MS + 50));
      expect((await postJson(keyed, chainId)).status).toBe(401);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it("with --admin-url: the same commands through a running gateway's admin API; a revoke applies at once", async () => {
    const token = "cli-admin-token-0123456789abcdef";
    // No DATA_DIR of the gateway's: the CLI reaches it only over the admin API.
    const gw = await startTestGateway({ mutate: (c) => void (c.adminTokens = [`cli:${token}`]) });
    try {
      const base = gw.network("testnet").url;
      const env = { ...process.env, DATA_DIR: mkdtempSync(join(tmpdir(), "cli-remote-")), ADMIN_TOKEN: `cli:${token}` } as Record<string, string>;
      const cli = (...args: string[]) => run("npm", ["run", "--silent", "keys", "--", "--admin-url", base, ...args], { env });
      const created = await cli("create", "--label", "remote", "--tpd", "5");
      expect(created.stderr).not.toMatch(/store/); // the store is not opened
      const key = /api key \(shown once\): (cgw_\S+)/.exec(created.stdout)![1]!;
      expect((await gw.keys.authenticate(key)).kind).toBe("key");
      const listed = (await cli("list", key.slice(0, 12))).stdout;
      expect(listed).toContain('"remote"');
      expect(listed).toContain("5 tx/day");
      expect(listed).not.toContain(key);
      expect((await cli("limits", key.slice(0, 12), "--tpm", "50", "--rpm", "100")).stdout).toMatch(/limits set: .*100\/min, 5 tx\/day, 50 tx\/30 days/); // --tpd 5 of create kept
      const cleared = (await cli("limits", key.slice(0, 12), "--tpd", "none")).stdout;
      expect(cleared).toMatch(/limits set: .*100\/min, 50 tx\/30 days/);
      expect(cleared).not.toMatch(/tx\/day/);
      const keyed = base + `/zgt/${key}`;
      const chainId = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
      expect((await postJson(keyed, chainId)).status).toBe(200);
      // "This minute" restarts at the minute's turn, which the CLI's seconds may cross (the full suite saw "0
      // this minute, 1 in 24 h"): the day's count is the one that must be 1.
      expect((await cli("usage", key.slice(0, 12))).stdout).toMatch(/requests: [01] this minute, 1 in 24 h/);
      await cli("revoke", key.slice(0, 12));
      expect((await postJson(keyed, chainId)).status).toBe(401);
      // A wrong token: the CLI says so and fails.
      const refused = await run("npm", ["run", "--silent", "keys", "--", "--admin-url", base, "list"], {
        env: { ...env, ADMIN_TOKEN: "wrong-admin-token-0123456789abcdef" },
      }).catch((e: { code: number; stderr: string }) => e);
      expect((refused as { code: number }).code).toBe(1);
      expect((refused as { stderr: string }).stderr).toMatch(/not an admin token/);
    } finally {
      await gw.close();
    }
  }, 60_000);

  for (const kind of ["embedded", "postgres"] as const) {
    it(`create, list, revoke (${kind})`, async () => {
      const env: Record<string, string> = { ...process.env, DATA_DIR: mkdtempSync(join(tmpdir(), "cli-")) } as Record<string, string>;
      let drop: (() => Promise<void>) | undefined;
      if (kind === "postgres") {
        const s = await freshSchemaUrl();
        env.DATABASE_URL = s.url;
        drop = s.drop;
      }
      // As the README runs it: `npm run keys -- …`.
      const cli = (...args: string[]) => run("npm", ["run", "--silent", "keys", "--", ...args], { env });
      const created = await cli("create", "--label", "ops team", "--rpm", "600");
      // A fresh DATA_DIR: said, so a key made beside the wrong directory does not go unnoticed (#31).
      expect(created.stderr).toMatch(/warning: no gateway data in .* yet; a new master seed is made there/);
      expect(created.stderr).toMatch(
        kind === "postgres" ? /keys: store PostgreSQL \(DATABASE_URL\), seed .*master-seed/ : /keys: store .*journal\.sqlite, seed .*master-seed/,
      );
      expect((await cli("list")).stderr).not.toMatch(/warning/);
      const key = /api key \(shown once\): (cgw_\S+)/.exec(created.stdout)![1]!;
      const wallet = /wallet: (0x[0-9a-fA-F]{40})/.exec(created.stdout)![1]!;
      const listed = (await cli("list")).stdout;
      expect(listed).toContain(key.slice(0, 12) + "…");
      expect(listed).toContain(wallet);
      expect(listed).toContain('"ops team"');
      expect(listed).toContain("600/min");
      expect(listed).not.toContain(key);
      const usage0 = (await cli("usage", key.slice(0, 12))).stdout;
      expect(usage0).toMatch(/transactions in the last 24 h: 0 \(no daily quota\)/);
      expect(usage0).toMatch(/requests: 600\/min/);
      expect((await cli("limits", key.slice(0, 12), "--tpm", "30", "--allow", "0x000000000000000000000000000000000000bEEF")).stdout).toMatch(
        /limits set: .*30 tx\/30 days, writes only to 0x000000000000000000000000000000000000beef/,
      );
      // Setting some limits keeps the others: --tpm and --allow did not drop the --rpm 600 of create (#65).
      expect((await cli("list")).stdout).toMatch(/600\/min.*30 tx\/30 days/);
      // And "none" clears one (there was no way left to, once limits not named were kept).
      const cleared = (await cli("limits", key.slice(0, 12), "--rpm", "none", "--allow", "none")).stdout;
      expect(cleared).toMatch(/limits set: .*30 tx\/30 days/);
      expect(cleared).not.toMatch(/600\/min|writes only to/);
      // --help on the command (it was "Unknown option '--help'"), exit 0, to stdout.
      expect((await cli("--help")).stdout).toMatch(/^usage: keys /);
      expect((await cli("limits", "--help")).stdout).toMatch(/limits ID\|PREFIX/);
      expect((await cli("revoke", key.slice(0, 12))).stdout).toMatch(/revoked: .*revoked \d{4}-/);
      const usage = await cli("frobnicate").catch((e: { code: number; stderr: string }) => e);
      expect((usage as { code: number }).code).toBe(2);
      await drop?.();
    });
  }
});
