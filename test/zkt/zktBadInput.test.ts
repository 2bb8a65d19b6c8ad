// Bad ZKT input: each a specific 4xx with the ZKT error shape, the id echoed, and nothing sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { TOKEN_ABI, TOKEN_SOURCE } from "../fixtures/contracts.js";

describe("ZKT bad input", () => {
  let gw: Gateway;
  let base: string;
  let token: string;
  const nonce = async () => gw.network("testnet").pool.call("eth_getTransactionCount", [gw.publicSignerAddress, "pending"]);

  beforeAll(async () => {
    gw = await startTestGateway();
    base = gw.network("testnet").url + "/zkt/try-it-out";
    const res = await postJson(base, { code: TOKEN_SOURCE, arguments: ["T", "T", "100"] });
    token = (res.json as { contractAddress: string }).contractAddress;
  });
  afterAll(() => gw?.close());

  const call = (over: Record<string, unknown>) => ({
    to: "TOKEN",
    abi: TOKEN_ABI,
    method: "transfer",
    arguments: ["0x000000000000000000000000000000000000dEaD", "1"],
    id: 77,
    ...over,
  });

  const cases: [string, unknown, number, string, RegExp][] = [
    ["no arguments", { id: 77 }, 400, "VALIDATION_ERROR", /arguments is required/],
    ["arguments of the wrong type (number)", { arguments: 5, id: 77 }, 400, "VALIDATION_ERROR", /arguments must be a string \(the message\), got a number/],
    ["arguments an array without to/abi/method", { arguments: ["a"], id: 77 }, 400, "VALIDATION_ERROR", /to, abi and method are missing/],
    ["call arguments not an array", call({ arguments: "x" }), 400, "VALIDATION_ERROR", /arguments must be an array for a contract call/],
    ["empty message", { arguments: "", id: 77 }, 400, "VALIDATION_ERROR", /non-empty string/],
    ["abi not an array", call({ abi: "function transfer(address,uint256)" }), 400, "VALIDATION_ERROR", /abi must be an array/],
    ["abi not parseable", call({ abi: ["function transfer(address to uint256"] }), 400, "VALIDATION_ERROR", /abi\[0\] is not a valid ABI entry/],
    ["method not in the abi", call({ method: "mint" }), 400, "VALIDATION_ERROR", /method "mint" is not in the abi/],
    // It was a 500 (#51).
    [
      "arguments nested 100,000 deep",
      `{"to":"0x000000000000000000000000000000000000dEaD","abi":["function f(uint256[] a)"],"method":"f","arguments":${"[".repeat(100_000)}${"]".repeat(100_000)},"id":77}`,
      400,
      "VALIDATION_ERROR",
      /maximum recursion depth/,
    ],
    [
      "overloaded method ambiguous",
      call({ method: "over", arguments: ["1"] }),
      400,
      "VALIDATION_ERROR",
      /method "over" is ambiguous: it is overloaded as over\(int16\), over\(uint8\); pass the full signature/,
    ],
    [
      "wrong argument count",
      call({ arguments: ["0x000000000000000000000000000000000000dEaD"] }),
      400,
      "VALIDATION_ERROR",
      /transfer takes 2 arguments \(address to, uint256 value\), got 1/,
    ],
    ["bad address argument", call({ arguments: ["0x1234", "1"] }), 400, "VALIDATION_ERROR", /argument 1 \(to\): "0x1234" is not an address/],
    [
      "number out of range",
      call({ method: "over(uint8)", arguments: ["256"] }),
      400,
      "VALIDATION_ERROR",
      /argument 1 \(a\): 256 is out of range for uint8 \(0..255\)/,
    ],
    ["negative for uint", call({ arguments: ["0x000000000000000000000000000000000000dEaD", "-1"] }), 400, "VALIDATION_ERROR", /-1 is out of range for uint256/],
    ["not a number", call({ arguments: ["0x000000000000000000000000000000000000dEaD", "ten"] }), 400, "VALIDATION_ERROR", /"ten" is not an integer/],
    [
      "bad bytes",
      call({ abi: ["function f(bytes32 x)"], method: "f", arguments: ["0x1234"] }),
      400,
      "VALIDATION_ERROR",
      /bytes32 needs exactly 32 bytes, got 2/,
    ],
    ["to not an address", call({ to: "0xnothex" }), 400, "VALIDATION_ERROR", /to must be a contract address/],
    ["wait not boolean", call({ wait: "yes" }), 400, "VALIDATION_ERROR", /wait must be true or false/],
    ["deploy wait not boolean", { code: "contract A {}", wait: 0 }, 400, "VALIDATION_ERROR", /wait must be true or false, got a number/],
    [
      "code that does not compile",
      { code: "pragma solidity ^0.8.20;\ncontract X { function f() { undefinedThing(); } }", id: 77 },
      400,
      "COMPILATION_ERROR",
      /does not compile/,
    ],
    [
      "code with a forbidden import",
      { code: 'pragma solidity ^0.8.20;\nimport "/etc/passwd";\ncontract X {}', id: 77 },
      400,
      "COMPILATION_ERROR",
      /only @openzeppelin\/contracts/,
    ],
    [
      "unknown contractName",
      { code: TOKEN_SOURCE, contractName: "Nope", arguments: [], id: 77 },
      400,
      "VALIDATION_ERROR",
      /contractName "Nope" is not a deployable contract/,
    ],
    [
      "wrong constructor arguments",
      { code: TOKEN_SOURCE, arguments: ["only one"], id: 77 },
      400,
      "VALIDATION_ERROR",
      /constructor of DemoToken takes 3 arguments/,
    ],
    [
      "fields mixed from two styles",
      { code: TOKEN_SOURCE, to: "0x000000000000000000000000000000000000dEaD", method: "x", arguments: [], id: 77 },
      400,
      "VALIDATION_ERROR",
      /fields from two request styles/,
    ],
    [
      "deploy field in a message",
      { arguments: "hi", contractName: "X", id: 77 },
      400,
      "VALIDATION_ERROR",
      /fields of another operation in a message \(V1\): "contractName" \(deploy \(V2\)\)/,
    ],
    ["call field in a deploy", { code: TOKEN_SOURCE, abi: [], id: 77 }, 400, "VALIDATION_ERROR", /fields from two request styles/],
    ["a body that is not an object", [1, 2], 400, "VALIDATION_ERROR", /must be a JSON object/],
    ["invalid JSON", "{oops", 400, "VALIDATION_ERROR", /not valid JSON/],
  ];

  for (const [name, body, status, code, message] of cases) {
    it(name, async () => {
      const before = await nonce();
      const payload = JSON.parse(JSON.stringify(body).replace('"TOKEN"', JSON.stringify(token ?? "")));
      const res = await postJson(base, typeof body === "string" ? body : payload);
      expect(res.status).toBe(status);
      const out = res.json as { success: boolean; errorCode: string; error: string; id?: unknown };
      expect(out.success).toBe(false);
      expect(out.errorCode).toBe(code);
      expect(out.error).toMatch(message);
      if (typeof body === "object" && body !== null && !Array.isArray(body) && "id" in body) expect(out.id).toBe(77);
      expect(await nonce()).toBe(before);
    });
  }

  it("compiler errors carry line and column", async () => {
    const res = await postJson(base, { code: "pragma solidity ^0.8.20;\ncontract X {\n  function f() public { undefinedThing(); }\n}" });
    const details = (res.json as { details: { line: number; column: number; message: string }[] }).details;
    expect(details[0]).toMatchObject({ line: 3, column: 25, message: expect.stringMatching(/Undeclared identifier/) });
  });

  it("a 1.5 MB body is 413 PAYLOAD_TOO_LARGE", async () => {
    const before = await nonce();
    const res = await postJson(base, { arguments: "x".repeat(1.5 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ success: false, errorCode: "PAYLOAD_TOO_LARGE" });
    expect(await nonce()).toBe(before);
  });
});
