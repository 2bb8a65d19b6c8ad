// Every platform (#53): no override maps one platform's anvil, cast or forge onto another's; the lockfile
// lets npm pick macOS arm64's own packages there; and this platform's install holds its own builds only.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

describe("installs on every platform", () => {
  it("no override touches a platform package, and npm ci for darwin/arm64 picks the darwin packages", { timeout: 120_000 }, () => {
    // The one override lets protoc-gen-es share our TypeScript instead of nesting its own 32 MB copy (it needs
    // TypeScript only for target=js, which buf.gen.yaml does not use); nothing maps one platform onto another.
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { overrides?: Record<string, unknown> };
    expect(pkg.overrides).toEqual({ "@bufbuild/protoplugin": { typescript: "$typescript" } });
    expect(readFileSync("buf.gen.yaml", "utf8")).toContain("target=ts");
    const dir = mkdtempSync(join(tmpdir(), "darwin-dry-"));
    copyFileSync("package.json", join(dir, "package.json"));
    copyFileSync("package-lock.json", join(dir, "package-lock.json"));
    const plan = execFileSync("npm", ["ci", "--dry-run", "--os=darwin", "--cpu=arm64", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: dir,
      encoding: "utf8",
    });
    for (const tool of ["anvil", "cast", "forge"]) {
      expect(plan).toContain(`@foundry-rs/${tool}-darwin-arm64`);
      expect(plan).not.toContain(`@foundry-rs/${tool}-linux-amd64`);
    }
  });

  it("this install holds only this platform's anvil, cast and forge, and node_modules stays under 900 MB", () => {
    const arch = process.arch === "x64" ? "amd64" : process.arch;
    const builds = readdirSync("node_modules/@foundry-rs").filter((d) => d.includes("-"));
    expect(builds.sort()).toEqual(["anvil", "cast", "forge"].map((t) => `${t}-${process.platform}-${arch}`));
    // -D: in a git worktree node_modules may be a symlink; measure what it points at.
    const kb = Number(execFileSync("du", ["-skD", "node_modules"], { encoding: "utf8" }).split("\t")[0]);
    expect(kb).toBeLessThan(900 * 1024);
  });
});
