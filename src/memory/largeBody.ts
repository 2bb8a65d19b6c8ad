// Collects a body that arrives in pieces, so that a large one gives its memory back to the system when it is
// dropped. Kept as a list of socket pieces (64 KB each), a 128 MB answer is 2,000 allocations from glibc's
// heap: freed, they stay in that heap, for good. Past SPILL_AT the
// pieces are copied into one buffer instead, which glibc maps on its own and unmaps when freed: of the body's
// declared length when it has one, else growing from FIRST_SPILL (below). Small bodies, nearly all of them,
// take the list as before.

import { copiedOut } from "./youngCollection.js";

/** Bodies up to this size stay a list of pieces (no copy). */
export const SPILL_AT = 512 * 1024;
/** Above glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MB on 64-bit): always its own mapping. */
const SPILL_MIN = 33 * 1024 * 1024;
/** glibc's mmap threshold, when fixed where the gateway is started (npm start, the Dockerfile, npm test). */
const FIXED_THRESHOLD = Number(process.env.MALLOC_MMAP_THRESHOLD_ ?? Number.NaN);
/**
 * The first spill of a body of no declared length. With glibc's threshold fixed below it, any such allocation
 * is its own mapping: 1 MB, growing 4x. Else at least 33 MB, over glibc's largest dynamic threshold, so it is
 * always its own mapping (the kernel makes only the pages written resident: a 2 MB body costs 2 MB of RSS).
 * V8 counts a buffer's whole length toward its GC pressure, so 33 MB per body brought on a full collection
 * every second body of a flood of chunked ones (47 for 100 bodies of 509 KB); 1 MB does not.
 */
const FIRST_SPILL = FIXED_THRESHOLD > 0 && FIXED_THRESHOLD < 1024 * 1024 ? 1024 * 1024 : SPILL_MIN;

export class LargeBody {
  private pieces: Buffer[] = [];
  private spill: Buffer | undefined;
  /** Bytes taken in so far. */
  size = 0;

  /**
   * `expected`: the body's declared length, when known: one past SPILL_AT spills from its first piece, into a
   * buffer of that length. `spillNow`: spill from the first piece whatever the length (one not declared).
   */
  constructor(
    private readonly expected = 0,
    private readonly spillNow = expected > SPILL_AT,
  ) {}

  /**
   * Appends a piece (the caller has checked any size limit); returns where it is kept: the piece itself, or
   * its copy in the spill.
   */
  push(piece: Buffer): Buffer {
    const start = this.size;
    const end = start + piece.length;
    this.size = end;
    if (!this.spill) {
      if (end <= SPILL_AT && !this.spillNow) {
        this.pieces.push(piece);
        return piece;
      }
      this.grow(end, start);
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

  /**
   * `prefix` followed by the whole body, in one copy; what it held is given back at once (the pieces were the
   * caller's alone, see giveBack) and it is left empty.
   */
  after(prefix: Buffer): Buffer {
    const whole = Buffer.concat(this.spill ? [prefix, this.spill.subarray(0, this.size)] : [prefix, ...this.pieces], prefix.length + this.size);
    if (this.spill) giveBack(this.spill);
    this.clear(true);
    return whole;
  }

  /**
   * Drops what it holds (an aborted body). `giveBackPieces`: the pieces were the caller's alone (see giveBack),
   * and their memory goes back now.
   */
  clear(giveBackPieces = false): void {
    if (giveBackPieces) for (const piece of this.pieces) giveBack(piece);
    this.pieces = [];
    this.spill = undefined;
    this.size = 0;
  }

  /** A spill of room for `needed` bytes, holding the `used` bytes taken in before. */
  private grow(needed: number, used: number): void {
    // Four times over: a 128 MB body is copied twice (33, then 132 MB), and what is written is all that is
    // resident.
    // A declared length is allocated exactly: V8 counts a buffer's whole length toward its GC pressure, and a
    // 33 MB one per small body brings on full collections. An allocation of that size is still glibc's own
    // mapping (over its 128 KB threshold).
    let capacity = this.spill ? Math.max(FIRST_SPILL, this.spill.length * 4) : this.expected >= needed ? this.expected : FIRST_SPILL;
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
 * it: between collections the socket reads of large bodies pile up in glibc's heap, which keeps the space.
 * Only for a piece that spans its buffer whole and that its caller holds alone (the socket's one
 * 'data' listener); anything else is left to the GC.
 */
export function giveBack(piece: Buffer): void {
  const whole = piece.buffer;
  if (whole instanceof ArrayBuffer && piece.byteOffset === 0 && piece.byteLength === whole.byteLength) whole.transfer(0);
}
