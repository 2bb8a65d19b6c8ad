// Collects a body that arrives in pieces, so that a large one gives its memory back to the system when it is
// dropped. Kept as a list of socket pieces (64 KB each), a 128 MB answer is 2,000 allocations from glibc's
// heap: freed, they stay in that heap (RSS 220 -> 352 MB after one 200 MB answer, for good). Past SPILL_AT the
// pieces are copied into one buffer of at least 33 MB instead: glibc serves any allocation over 32 MB (its
// largest dynamic mmap threshold) with its own mmap and unmaps it when freed, and the kernel makes only the
// pages written resident, so a 2 MB body costs 2 MB of RSS, not 33. Small bodies, nearly all of them, take
// the list as before.

import { copiedOut } from "./youngCollection.js";

/** Bodies up to this size stay a list of pieces (no copy). */
export const SPILL_AT = 512 * 1024;
/** Above glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MB on 64-bit): always its own mapping. */
const SPILL_MIN = 33 * 1024 * 1024;

export class LargeBody {
  private pieces: Buffer[] = [];
  private spill: Buffer | undefined;
  /** Bytes taken in so far. */
  size = 0;

  /** `expected`: the body's declared length, when known: one past SPILL_AT spills from its first piece. */
  constructor(private readonly expected = 0) {}

  /**
   * Appends a piece (the caller has checked any size limit); returns where it is kept: the piece itself, or
   * its copy in the spill.
   */
  push(piece: Buffer): Buffer {
    const start = this.size;
    const end = start + piece.length;
    this.size = end;
    if (!this.spill) {
      if (end <= SPILL_AT && this.expected <= SPILL_AT) {
        this.pieces.push(piece);
        return piece;
      }
      this.grow(Math.max(end, this.expected), start);
    } else if (end > this.spill.length) this.grow(end, start);
    piece.copy(this.spill!, start);
    copiedOut(piece.length);
    return this.spill!.subarray(start, end);
  }

  /** How many pieces arrived, while they are kept as a list (2 once it spilled: "more than one"). */
  get pieceCount(): number {
    return this.spill ? 2 : this.pieces.length;
  }

  /** The whole body as text. */
  text(): string {
    if (this.spill) return this.spill.toString("utf8", 0, this.size);
    return this.pieces.length === 1 ? this.pieces[0]!.toString("utf8") : Buffer.concat(this.pieces, this.size).toString("utf8");
  }

  /** The whole body's bytes. */
  bytes(): Buffer {
    if (this.spill) return this.spill.subarray(0, this.size);
    return this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.size);
  }

  /** Drops what it holds (an aborted body). */
  clear(): void {
    this.pieces = [];
    this.spill = undefined;
    this.size = 0;
  }

  /** A spill of room for `needed` bytes, holding the `used` bytes taken in before. */
  private grow(needed: number, used: number): void {
    // Four times over: a 128 MB body is copied twice (33, then 132 MB), and what is written is all that is
    // resident.
    let capacity = Math.max(SPILL_MIN, this.spill ? this.spill.length * 4 : 0);
    while (capacity < needed) capacity *= 4;
    // allocUnsafeSlow: one allocation of its own (not Node's shared pool), not zero-filled, so untouched pages
    // are never made resident.
    const next = Buffer.allocUnsafeSlow(capacity);
    if (this.spill) this.spill.copy(next, 0, 0, used);
    else {
      let at = 0;
      for (const p of this.pieces) at += p.copy(next, at);
      this.pieces = [];
    }
    this.spill = next;
  }
}

/**
 * Gives a read buffer whose bytes were copied into a spill back to the system now, not when the GC gets to
 * it: between collections the 64 KB socket reads of 200 MB of bodies piled up in glibc's heap (+51 MB of RSS,
 * kept after). Only for a piece that spans its buffer whole and that its caller holds alone (the socket's one
 * 'data' listener); anything else is left to the GC.
 */
export function giveBack(piece: Buffer): void {
  const whole = piece.buffer;
  if (whole instanceof ArrayBuffer && piece.byteOffset === 0 && piece.byteLength === whole.byteLength) whole.transfer(0);
}
