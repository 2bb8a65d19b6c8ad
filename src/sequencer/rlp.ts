// RLP (the Ethereum yellow paper, appendix B) for the transactions the sequencer signs: byte strings and
// lists. Integers are minimal big-endian byte strings (0 is empty). The encoding is sized first and written
// into one buffer: building a small array per item and concatenating them cost several times more, twice per
// write (the signing payload and the signed transaction; bench/README.md).
export type RlpItem = Uint8Array | RlpItem[];

export function rlpEncode(item: RlpItem): Buffer {
  const out = Buffer.allocUnsafe(encodedLength(item));
  writeItem(item, out, 0);
  return out;
}

const EMPTY = new Uint8Array(0);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An unsigned integer as RLP wants it: big-endian, no leading zero bytes. */
export function rlpInt(n: bigint | number): Uint8Array {
  if (n < 0) throw new RangeError(`RLP integers are unsigned, got ${n}`);
  if (typeof n === "bigint") {
    if (n > MAX_SAFE) {
      let hex = n.toString(16);
      if (hex.length % 2) hex = "0" + hex;
      return Buffer.from(hex, "hex");
    }
    n = Number(n);
  }
  if (!Number.isSafeInteger(n)) throw new RangeError(`not an integer RLP can encode: ${n}`);
  if (n === 0) return EMPTY;
  const out = new Uint8Array(byteLength(n));
  for (let i = out.length - 1; i >= 0; i--, n = Math.floor(n / 256)) out[i] = n % 256;
  return out;
}

/** A big-endian integer's bytes without leading zeros (a signature's r and s). */
export function stripZeros(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

/** Bytes needed for a positive safe integer (division, not shifts: lengths may pass 2^31). */
function byteLength(n: number): number {
  let bytes = 0;
  for (; n > 0; n = Math.floor(n / 256)) bytes++;
  return bytes;
}

const isSingleByte = (bytes: Uint8Array): boolean => bytes.length === 1 && bytes[0]! < 0x80;
const prefixLength = (length: number): number => (length < 56 ? 1 : 1 + byteLength(length));

function encodedLength(item: RlpItem): number {
  if (item instanceof Uint8Array) return isSingleByte(item) ? 1 : prefixLength(item.length) + item.length;
  const payload = payloadLength(item);
  return prefixLength(payload) + payload;
}

function payloadLength(list: RlpItem[]): number {
  let length = 0;
  for (const item of list) length += encodedLength(item);
  return length;
}

/** Writes a string's (offset 0x80) or a list's (0xc0) length prefix at `at`; returns where the payload starts. */
function writePrefix(length: number, offset: number, out: Buffer, at: number): number {
  if (length < 56) {
    out[at] = offset + length;
    return at + 1;
  }
  const bytes = byteLength(length);
  out[at] = offset + 55 + bytes;
  for (let i = bytes; i >= 1; i--, length = Math.floor(length / 256)) out[at + i] = length % 256;
  return at + 1 + bytes;
}

function writeItem(item: RlpItem, out: Buffer, at: number): number {
  if (item instanceof Uint8Array) {
    if (isSingleByte(item)) {
      out[at] = item[0]!;
      return at + 1;
    }
    at = writePrefix(item.length, 0x80, out, at);
    out.set(item, at);
    return at + item.length;
  }
  at = writePrefix(payloadLength(item), 0xc0, out, at);
  for (const child of item) at = writeItem(child, out, at);
  return at;
}
