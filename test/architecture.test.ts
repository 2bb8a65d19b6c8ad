// The layers' import arrows (#29): transport -> handlers -> policy/core -> store, never back; no transport
// file decides policy (limits, idempotency, authentication live in policy/ and keys/).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
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
      // The composition root (network.ts and its parts under network/, gateway.ts, main.ts) wires transports in.
      .filter((f) => !f.startsWith("src/transport/") && !f.startsWith("src/network/") && !["src/network.ts", "src/gateway.ts", "src/main.ts"].includes(f))
      .flatMap((f) =>
        imports(f)
          .filter((i) => i.includes("/transport/"))
          .map((i) => `${f} -> ${i}`),
      );
    expect(wrong).toEqual([]);
  });

  it("startNetwork stays a table of parts (#64): under 80 lines, each part a file of network/", () => {
    const text = readFileSync("src/network.ts", "utf8");
    const start = text.indexOf("export async function startNetwork");
    const body = text.slice(start, text.indexOf("\n}\n", start) + 2);
    expect(body.split("\n").length).toBeLessThan(80);
    // Nothing but the composition root imports a part.
    const intoParts = src
      .filter((f) => !f.startsWith("src/network/") && f !== "src/network.ts")
      .flatMap((f) =>
        imports(f)
          .filter((i) => i.includes("/network/"))
          .map((i) => `${f} -> ${i}`),
      );
    expect(intoParts).toEqual([]);
  });

  it("no function in src is over 120 lines (#64): Biome's noExcessiveLinesPerFunction holds src to it, and passes", () => {
    const config = JSON.parse(readFileSync("biome.json", "utf8")) as {
      overrides?: { includes: string[]; linter?: { rules?: { complexity?: Record<string, { level: string; options: { maxLines: number } }> } } }[];
    };
    const rule = config.overrides?.find((o) => o.includes.includes("src/**"))?.linter?.rules?.complexity?.noExcessiveLinesPerFunction;
    expect(rule?.level).toBe("error");
    expect(rule?.options.maxLines).toBeLessThanOrEqual(120);
    const lint = spawnSync(join("node_modules", ".bin", "biome"), ["lint", "--only=complexity/noExcessiveLinesPerFunction", "src"], { encoding: "utf8" });
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
  });

  it("comments say why, not what was measured: no timing, CPU share or RSS figure in src (bench/README.md holds them)", () => {
    const measurement = /\d\s?(µs|ns)\b|\d\s?% of (the |a )?(gateway'?s? )?(CPU|eth_)|\bRSS\b[^.]*\d+\s?MB|\(#\d+\)/;
    const found = src.flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .map((line, i) => ({ line, at: `${f}:${i + 1}` }))
        .filter(({ line }) => /^\s*(\/\/|\*|\/\*\*)/.test(line) && measurement.test(line))
        .map(({ at, line }) => `${at} ${line.trim()}`),
    );
    expect(found).toEqual([]);
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

  it("no transport file decides policy: none imports policy/, limits/, keys/ or the idempotency store (one admission, handlers/admission.ts, is their way in)", () => {
    const wrong = src
      .filter((f) => f.startsWith("src/transport/"))
      .flatMap((f) =>
        imports(f)
          .filter((i) => /\/(policy|limits|keys)\/|idempotencyStore/.test(i))
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
