// Where the embedded node's anvil comes from (#53): ANVIL_PATH, else the platform package npm installed (no
// override maps another platform's build onto it), else the copy @foundry-rs/anvil's install script fetched,
// else anvil on PATH.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { anvilBinaryPath } from "../../src/chain/embeddedNode.js";

describe("the anvil binary", () => {
  it("is this platform's own package, and runs", () => {
    const path = anvilBinaryPath({});
    const arch = process.arch === "x64" ? "amd64" : process.arch;
    expect(path).toContain(`@foundry-rs/anvil-${process.platform}-${arch}/bin/anvil`);
    expect(execFileSync(path, ["--version"], { encoding: "utf8" })).toMatch(/anvil/i);
  });

  it("ANVIL_PATH wins, and a wrong one says so", () => {
    const real = anvilBinaryPath({});
    expect(anvilBinaryPath({ ANVIL_PATH: real })).toBe(real);
    expect(() => anvilBinaryPath({ ANVIL_PATH: "/nowhere/anvil" })).toThrow(/ANVIL_PATH is set but \/nowhere\/anvil does not exist/);
  });
});
