// The compiler is chosen by the source's pragma (#34): Stability's docs say "0.8.24 or lower".
import { createRequire } from "node:module";
import { afterAll, describe, expect, it } from "vitest";
import { COMPILERS, compilerFor, pragmaOf } from "../../src/zkt/solc/compilerVersions.js";
import { SolidityCompiler } from "../../src/zkt/solc/compileSolidity.js";
import type { GatewayError } from "../../src/errors.js";

const require = createRequire(import.meta.url);

describe("compiler by pragma", () => {
  it("every listed compiler is installed, at its version", () => {
    for (const c of COMPILERS) expect((require(`${c.pkg}/package.json`) as { version: string }).version).toBe(c.version);
  });

  it("picks the newest compiler the pragma allows, and names the pragma and the versions when none does", () => {
    expect(pragmaOf("// pragma solidity 0.4.0;\n/* pragma solidity 0.5.0; */\npragma solidity >=0.8.0 <0.8.25;\ncontract A {}")).toBe(">=0.8.0 <0.8.25");
    expect(compilerFor("pragma solidity 0.8.24; contract A {}").version).toBe("0.8.24");
    expect(compilerFor("pragma solidity =0.8.24; contract A {}").version).toBe("0.8.24");
    expect(compilerFor("pragma solidity >=0.8.0 <0.8.25; contract A {}").version).toBe("0.8.24");
    expect(compilerFor("pragma solidity 0.8.19; contract A {}").version).toBe("0.8.19");
    expect(compilerFor("pragma solidity ^0.8.20; contract A {}").version).toBe(COMPILERS[0]!.version);
    expect(compilerFor("contract A {}").version).toBe(COMPILERS[0]!.version);
    const err = (() => {
      try {
        compilerFor("pragma solidity 0.7.6; contract A {}");
      } catch (e) {
        return e as GatewayError;
      }
    })();
    expect(err?.kind).toBe("compilation");
    expect(err?.message).toMatch(/"pragma solidity 0\.7\.6;" \(available: 0\.8\.37, 0\.8\.24, 0\.8\.19\)/);
  });

  describe("compiles with the chosen version", () => {
    const compiler = new SolidityCompiler();
    afterAll(() => compiler.close());
    it("0.8.24 and 0.8.19 sources compile (they failed with the one pinned 0.8.37)", { timeout: 120_000 }, async () => {
      const greeter = (pragma: string) =>
        `pragma solidity ${pragma};\ncontract Greeter { string public greeting; constructor(string memory g) { greeting = g; } function set(string memory g) public { greeting = g; } }`;
      for (const pragma of ["0.8.24", "0.8.19", ">=0.8.0 <0.8.25", "^0.8.20"]) {
        const c = await compiler.compile(greeter(pragma), { evmVersion: "paris" });
        expect(c.name, pragma).toBe("Greeter");
        expect(c.bytecode, pragma).toMatch(/^0x60/);
      }
    });
  });
});
