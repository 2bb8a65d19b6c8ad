// The compiler wrapper: identical source + settings compile once; contract selection per DESIGN.md.
import { afterAll, describe, expect, it } from "vitest";
import { SolidityCompiler } from "../../src/zkt/solc/compileSolidity.js";
import { GatewayError } from "../../src/errors.js";
import { sourcePositions } from "../../src/zkt/solc/sourcePositions.js";

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
interface I { function f() external; }
library L { function g() internal pure returns (uint) { return 1; } }
contract First { function one() external pure returns (uint) { return 1; } }
abstract contract Abs { function h() external virtual; }
contract Second { function two() external pure returns (uint) { return L.g() + 1; } }
interface J {}`;

describe("SolidityCompiler", () => {
  const compiler = new SolidityCompiler();
  afterAll(() => compiler.close());

  it("deploys the last non-abstract contract by default, or the one named", async () => {
    expect((await compiler.compile(SOURCE, { evmVersion: "paris" })).name).toBe("Second");
    expect((await compiler.compile(SOURCE, { evmVersion: "paris", contractName: "First" })).name).toBe("First");
    const err = await compiler.compile(SOURCE, { evmVersion: "paris", contractName: "Abs" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).message).toMatch(/defined: First, Second/);
  });

  it("compiles identical source and settings once", async () => {
    const before = compiler.compilations;
    const [a, b] = await Promise.all([
      compiler.compile(SOURCE + "\n// v2", { evmVersion: "paris" }),
      compiler.compile(SOURCE + "\n// v2", { evmVersion: "paris" }),
    ]);
    await compiler.compile(SOURCE + "\n// v2", { evmVersion: "paris", contractName: "First" });
    expect(compiler.compilations - before).toBe(1);
    expect(a.bytecode).toBe(b.bytecode);
    // Different settings are a different compile.
    await compiler.compile(SOURCE + "\n// v2", { evmVersion: "london" });
    expect(compiler.compilations - before).toBe(2);
  });

  it("stops an idle solc and starts it again for a new source; cached sources need none", async () => {
    const idle = new SolidityCompiler({ idleMs: 300 });
    try {
      await idle.compile(SOURCE, { evmVersion: "paris" });
      expect(idle.warm).toBe(true);
      // Polled, not timed: a loaded machine may fire the idle timer late.
      for (let i = 0; i < 200 && idle.warm; i++) await new Promise((r) => setTimeout(r, 50));
      expect(idle.warm).toBe(false);
      expect((await idle.compile(SOURCE, { evmVersion: "paris" })).name).toBe("Second");
      expect(idle.warm).toBe(false);
      expect(idle.compilations).toBe(1);
      expect((await idle.compile(SOURCE + "\n// v3", { evmVersion: "paris" })).name).toBe("Second");
      expect(idle.compilations).toBe(2);
      expect(idle.warm).toBe(true);
    } finally {
      await idle.close();
    }
  });
});

describe("sourcePositions", () => {
  it("gives each offset its 1-based line and column in one pass, in any order", () => {
    const code = "ab\ncd\n\nefg";
    expect(sourcePositions(code, [8, 0, 4, -1, 3, 99])).toEqual([
      { line: 4, column: 2 },
      { line: 1, column: 1 },
      { line: 2, column: 2 },
      {},
      { line: 2, column: 1 },
      {},
    ]);
  });
});
