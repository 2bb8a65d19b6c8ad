// RLP as the yellow paper (appendix B) and ethers encode it: the known examples, lengths across the 55-byte
// boundary and beyond 256, and random nested items checked against ethers' encodeRlp.
import { describe, expect, it } from "vitest";
import { encodeRlp, hexlify, type RlpStructuredDataish } from "ethers";
import { randomBytes } from "node:crypto";
import { rlpEncode, rlpInt, type RlpItem } from "../../src/sequencer/rlp.js";

const hex = (item: RlpItem): string => "0x" + rlpEncode(item).toString("hex");
const text = (s: string): Uint8Array => Buffer.from(s, "utf8");
/** The same item in ethers' form (hex strings and arrays). */
const forEthers = (item: RlpItem): RlpStructuredDataish => (item instanceof Uint8Array ? hexlify(item) : item.map(forEthers));

describe("RLP", () => {
  it("encodes the specification's examples", () => {
    expect(hex(text("dog"))).toBe("0x83646f67");
    expect(hex([text("cat"), text("dog")])).toBe("0xc88363617483646f67");
    expect(hex(new Uint8Array(0))).toBe("0x80");
    expect(hex([])).toBe("0xc0");
    expect(hex(rlpInt(0))).toBe("0x80");
    expect(hex(Uint8Array.of(0))).toBe("0x00");
    expect(hex(rlpInt(15))).toBe("0x0f");
    expect(hex(rlpInt(1024))).toBe("0x820400");
    expect(hex([[], [[]], [[], [[]]]])).toBe("0xc7c0c1c0c3c0c1c0");
    const lorem = text("Lorem ipsum dolor sit amet, consectetur adipisicing elit");
    expect(hex(lorem)).toBe("0xb838" + Buffer.from(lorem).toString("hex"));
  });

  it("encodes integers minimally, numbers and bigints alike, and refuses what is not an unsigned integer", () => {
    for (const n of [1, 127, 128, 255, 256, 65535, 65536, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
      expect(hex(rlpInt(n))).toBe(encodeRlp(hexlify(rlpInt(BigInt(n)))));
      expect(Buffer.from(rlpInt(n)).toString("hex")).toBe(
        BigInt(n)
          .toString(16)
          .padStart(Math.ceil(BigInt(n).toString(16).length / 2) * 2, "0"),
      );
    }
    expect(Buffer.from(rlpInt(2n ** 200n + 1n)).toString("hex")).toBe((2n ** 200n + 1n).toString(16).padStart(52, "0"));
    expect(() => rlpInt(-1)).toThrow(RangeError);
    expect(() => rlpInt(-1n)).toThrow(RangeError);
    expect(() => rlpInt(1.5)).toThrow(RangeError);
  });

  it("matches ethers on strings and lists across the length boundaries", () => {
    for (const length of [0, 1, 54, 55, 56, 57, 255, 256, 257, 65535, 65536, 70000]) {
      const bytes = randomBytes(length);
      expect(hex(bytes)).toBe(encodeRlp(hexlify(bytes)));
      const list: RlpItem[] = [bytes, [Uint8Array.of(1)], new Uint8Array(0)];
      expect(hex(list)).toBe(encodeRlp(forEthers(list)));
    }
  });

  it("matches ethers on random nested items", () => {
    const random = (depth: number): RlpItem => {
      if (depth === 0 || Math.random() < 0.5) {
        const r = Math.random();
        return r < 0.2 ? Uint8Array.of(Math.floor(Math.random() * 256)) : randomBytes(Math.floor(Math.random() * (r < 0.9 ? 60 : 300)));
      }
      return Array.from({ length: Math.floor(Math.random() * 6) }, () => random(depth - 1));
    };
    for (let i = 0; i < 500; i++) {
      const item = random(4);
      expect(hex(item)).toBe(encodeRlp(forEthers(item)));
    }
  });
});
