// RLP (the Ethereum yellow paper, appendix B) for the transactions the sequencer signs: byte strings and
// lists, encoded straight into one buffer. Integers are minimal big-endian byte strings (0 is empty).
export type RlpItem = Uint8Array | RlpItem[];

export function rlpEncode(item: RlpItem): Buffer {
  return Buffer.concat(encodeParts(item));
}

/** An unsigned integer as RLP wants it: big-endian, no leading zero bytes. */
export function rlpInt(n: bigint | number): Uint8Array {
  if (n === 0 || n === 0n) return EMPTY;
  let hex = n.toString(16);
  if (hex.length % 2) hex = "0" + hex;
  return Buffer.from(hex, "hex");
}

/** A big-endian integer's bytes without leading zeros (a signature's r and s). */
export function stripZeros(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

const EMPTY = new Uint8Array(0);

function encodeParts(item: RlpItem): Uint8Array[] {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0]! < 0x80) return [item];
    return [lengthPrefix(item.length, 0x80), item];
  }
  const parts = item.flatMap(encodeParts);
  const length = parts.reduce((sum, p) => sum + p.length, 0);
  return [lengthPrefix(length, 0xc0), ...parts];
}

function lengthPrefix(length: number, offset: number): Uint8Array {
  if (length < 56) return Uint8Array.of(offset + length);
  const bytes = rlpInt(length);
  return Uint8Array.of(offset + 55 + bytes.length, ...bytes);
}
