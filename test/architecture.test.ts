// The layers' import arrows (#29): transport -> handlers -> policy/core -> store, never back; no transport
// file decides policy (limits, idempotency, authentication live in policy/ and keys/).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

const imports = (file: string): string[] => [...readFileSync(file, "utf8").matchAll(/^import[^;]*?from "([^"]+)"/gms)].map((m) => m[1]!);

describe("architecture", () => {
  const src = files("src");

  it("nothing below the transports imports a transport", () => {
    const wrong = src
      .filter((f) => !f.startsWith("src/transport/") && !["src/network.ts", "src/gateway.ts", "src/main.ts"].includes(f))
      .flatMap((f) =>
        imports(f)
          .filter((i) => i.includes("/transport/"))
          .map((i) => `${f} -> ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it("the store imports no transport, handler or policy", () => {
    const wrong = src
      .filter((f) => f.startsWith("src/store/"))
      .flatMap((f) =>
        imports(f)
          .filter((i) => /\/(transport|handlers|policy)\//.test(i))
          .map((i) => `${f} -> ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it("no transport file decides policy: none imports the limits, the idempotency store or the key store", () => {
    const wrong = src
      .filter((f) => f.startsWith("src/transport/"))
      .flatMap((f) =>
        imports(f)
          .filter((i) => /\/limits\/|idempotencyStore|\/keys\/apiKeys|rateLimits/.test(i))
          .map((i) => `${f} -> ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it("transports reach the cores only through the handlers: no transport file imports RpcCore or ZktCore (types aside)", () => {
    const wrong = src
      .filter((f) => f.startsWith("src/transport/"))
      .flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(/^import (?!type )[^;]*?from "([^"]+)"/gms)]
          .map((m) => m[1]!)
          .filter((i) => /\/(rpcCore|zktCore)\.js$/.test(i))
          .map((i) => `${f} -> ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it("handlers import no transport", () => {
    const wrong = src
      .filter((f) => f.startsWith("src/handlers/") || f.startsWith("src/policy/"))
      .flatMap((f) =>
        imports(f)
          .filter((i) => i.includes("/transport/"))
          .map((i) => `${f} -> ${i}`),
      );
    expect(wrong).toEqual([]);
  });
});
