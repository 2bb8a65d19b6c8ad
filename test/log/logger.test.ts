// Logs are JSON lines with ISO times and level names; secret-named fields and key paths are redacted.
import { describe, expect, it } from "vitest";
import { createLogger, redactPath } from "../../src/log/logger.js";

describe("logger", () => {
  it("writes JSON lines, carries child fields, and redacts secret-named fields", () => {
    const lines: string[] = [];
    const log = createLogger("debug", { service: "t" }, (l) => lines.push(l)).child({ network: "testnet" });
    log.info("hello", { apiKey: "cgw_secret", nested: { privateKey: "0xabc" }, ok: 1 });
    log.debug("details");
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(first).toMatchObject({
      level: "info",
      msg: "hello",
      service: "t",
      network: "testnet",
      apiKey: "[REDACTED]",
      nested: { privateKey: "[REDACTED]" },
      ok: 1,
    });
    expect(new Date(first.time as string).toString()).not.toBe("Invalid Date");
    expect(lines.join("")).not.toContain("cgw_secret");
    expect(lines).toHaveLength(2);
  });

  it("respects the level", () => {
    const lines: string[] = [];
    createLogger("warn", {}, (l) => lines.push(l)).info("quiet");
    expect(lines).toEqual([]);
  });

  it("redacts keys in paths but keeps the public ones", () => {
    expect(redactPath("/zkt/cgw_abc")).toBe("/zkt/[REDACTED]");
    expect(redactPath("/zgt/cgw_abc/sponsor-consent")).toBe("/zgt/[REDACTED]/sponsor-consent");
    expect(redactPath("/zkt/try-it-out")).toBe("/zkt/try-it-out");
    expect(redactPath("/zkt/transactions/123")).toBe("/zkt/transactions/123");
    const queueId = "019ab2c3-4d5e-7f60-8123-456789abcdef";
    expect(redactPath(`/zkt/transactions/${queueId}`)).toBe(`/zkt/transactions/${queueId}`);
  });

  it("redacts key-shaped segments on near-miss paths too (#28)", () => {
    const key = "cgw_" + "Ab3-_x".repeat(7) + "z";
    const bare = key.slice(4);
    for (const path of [
      `/zgt//${key}`,
      `/ZGT/${key}`,
      `/Zkt/${key}/x`,
      `/zkt/transactions/${key}`,
      `/zkt/transactions/${bare}`,
      `/v1/${key}`,
      `/?apiKey=${key}`,
      `/zkt/docs/${bare}`,
      `//zkt//${key}`,
    ]) {
      const out = redactPath(path);
      expect(out, path).not.toContain(bare);
      expect(out, path).toContain("[REDACTED]");
    }
  });
});
