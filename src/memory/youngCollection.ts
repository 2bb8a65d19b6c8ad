// A collection of V8's young generation, asked for while large bodies stream in. A socket read (64 KB) copied
// into a body's spill is dropped at once, but its memory is freed only when the GC gets to the Buffer, and V8
// waits for tens of MB of them; glibc's heap grows by what piles up meanwhile and keeps the space. A young
// collection every 4 MB of such bytes frees them as they go. Only bodies past largeBody.ts's spill line pay
// it (bench/README.md, "Hand-made at the edge").
import { gc } from "./exposedGc.js";

const EVERY_BYTES = 4 * 1024 * 1024;

let since = 0;

/** Counts `bytes` copied out of socket reads; collects the young generation every EVERY_BYTES. */
export function copiedOut(bytes: number): void {
  since += bytes;
  if (since < EVERY_BYTES) return;
  since = 0;
  gc({ type: "minor" });
}
