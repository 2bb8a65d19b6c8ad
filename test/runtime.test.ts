// The project runs on Node 24 LTS whatever Node the machine has (on Linux): the locked `node-linux-*` package
// puts a Node 24 binary first on npm scripts' PATH (#30, #65). And `npm ci` compiles nothing: a native addon must come prebuilt in its
// package (the embedded journal is node:sqlite, built into Node, rather than better-sqlite3).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** Every installed package directory, scoped ones and nested node_modules included. */
function packages(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith("."))
    .flatMap((d) => {
      const path = join(dir, d.name);
      if (d.name.startsWith("@")) return packages(path);
      return [path, ...packages(join(path, "node_modules"))];
    });
}

describe("runtime", () => {
  it("npm test runs on Node 24", () => {
    expect(process.versions.node.split(".")[0]).toBe("24");
  });

  it("no installed package builds a native addon: each one with a binding.gyp ships a prebuild for this platform and has no build output", () => {
    const addons = packages("node_modules").filter((p) => existsSync(join(p, "binding.gyp")));
    for (const addon of addons) {
      expect(
        existsSync(join(addon, "prebuilds", `${process.platform}-${process.arch}`)),
        `${addon} has no prebuild for ${process.platform}-${process.arch}`,
      ).toBe(true);
      expect(existsSync(join(addon, "build")), `${addon} was built at install`).toBe(false);
    }
  });
});
