// Contracts stay lint-clean, and the committed gen/ is exactly what buf generates from proto/.
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

describe("proto contracts", () => {
  it("buf lint passes", () => {
    execFileSync("npx", ["buf", "lint"], { stdio: "pipe" });
  });
  it("gen/ is up to date with proto/ (run npm run generate)", () => {
    const out = mkdtempSync(join(tmpdir(), "gen-"));
    execFileSync("npx", ["buf", "generate", "-o", out], { stdio: "pipe" });
    const fresh = files(join(out, "gen"))
      .map((f) => relative(join(out, "gen"), f))
      .sort();
    const committed = files("gen")
      .map((f) => relative("gen", f))
      .sort();
    expect(committed).toEqual(fresh);
    for (const f of fresh) expect(readFileSync(join("gen", f), "utf8")).toBe(readFileSync(join(out, "gen", f), "utf8"));
  });
});
