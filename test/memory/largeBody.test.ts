// A body collected as pieces reads back the same whether it stayed a list or spilled into a mapping of its own.
import { describe, expect, it } from "vitest";
import { giveBack, LargeBody, SPILL_AT } from "../../src/memory/largeBody.js";

const pieces = (total: number, size: number): Buffer[] =>
  Array.from({ length: Math.ceil(total / size) }, (_, i) =>
    Buffer.from(
      "abcdefghij"
        .repeat(Math.ceil(size / 10))
        .slice(0, Math.min(size, total - i * size))
        .replace(/^./, String(i % 10)),
    ),
  );

describe("LargeBody", () => {
  for (const [name, total, size, expected] of [
    ["small, one piece", 100, 100, 0],
    ["small, many pieces", 5_000, 333, 0],
    ["at the spill line", SPILL_AT, 64 * 1024, 0],
    ["past it, spilled on the way", SPILL_AT + 1, 64 * 1024, 0],
    ["declared large, spilled from its first piece", 700_000, 10_000, 700_000],
    ["past the first mapping (grown)", 40 * 1024 * 1024, 1024 * 1024, 0],
  ] as const) {
    it(`${name}: text, and the bytes after a prefix, are the pieces joined`, () => {
      const all = pieces(total, size);
      const body = new LargeBody(expected);
      const kept = all.map((p) => body.push(p));
      const whole = Buffer.concat(all);
      expect(body.size).toBe(whole.length);
      expect(body.text()).toBe(whole.toString("utf8"));
      // What push gave back holds the piece's bytes (the piece, or its copy).
      expect(Buffer.concat(kept).equals(whole)).toBe(true);
      expect(body.pieceCount).toBe(total > SPILL_AT || expected > SPILL_AT ? 2 : all.length);
      // After a prefix (the request's head): one buffer, and the body is left empty.
      const head = Buffer.from("POST / HTTP/1.1\r\n\r\n");
      expect(body.after(head).equals(Buffer.concat([head, whole]))).toBe(true);
      expect(body.size).toBe(0);
    });
  }

  it("a spilled piece is a copy: giving the piece back leaves the body whole", () => {
    const body = new LargeBody(0, true);
    const piece = Buffer.allocUnsafeSlow(1000).fill(0x61);
    const kept = body.push(piece);
    expect(kept).not.toBe(piece);
    giveBack(piece);
    expect(piece.length).toBe(0);
    expect(body.text()).toBe("a".repeat(1000));
  });

  it("giveBack leaves a view into a larger buffer alone", () => {
    const whole = Buffer.alloc(100, 0x62);
    const view = whole.subarray(10, 20);
    giveBack(view);
    expect(view.length).toBe(10);
    expect(whole.length).toBe(100);
  });

  it("clear drops what it held", () => {
    const body = new LargeBody();
    body.push(Buffer.alloc(SPILL_AT + 10));
    body.clear();
    expect(body.size).toBe(0);
    expect(body.text()).toBe("");
  });
});
