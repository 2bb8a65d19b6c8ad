// The project runs on Node 24 LTS whatever Node the machine has: the `node` npm package puts a Node 24 binary
// first on npm scripts' PATH (#30). This is that check, from inside the suite.
import { describe, expect, it } from "vitest";

describe("runtime", () => {
  it("npm test runs on Node 24", () => {
    expect(process.versions.node.split(".")[0]).toBe("24");
  });
});
