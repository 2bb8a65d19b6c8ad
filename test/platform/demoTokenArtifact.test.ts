// The committed demo-token artifact is what the pinned solc makes of contracts/DemoToken.sol.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { compileAll } from "../../scripts/compileContracts.js";

describe("contract artifacts", () => {
  it("are current (npm run build:contracts)", async () => {
    for (const [path, text] of await compileAll()) expect(readFileSync(path, "utf8")).toBe(text);
  });
});
