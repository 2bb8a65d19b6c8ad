// A collection of V8's young generation, asked for while large bodies stream in. A socket read (64 KB) copied
// into a body's spill is dropped at once, but its memory is freed only when the GC gets to the Buffer, and V8
// waits for tens of MB of them; glibc's heap grows by what piles up meanwhile and keeps the space. A young
// collection every 4 MB of such bytes frees them as they go. Only bodies past largeBody.ts's spill line pay
// it (bench/README.md, "Hand-made at the edge").
import v8 from "node:v8";
import vm from "node:vm";

const EVERY_BYTES = 4 * 1024 * 1024;

// The gc() that --expose-gc would give, without asking every way the gateway is started for the flag.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as (options: { type: "minor" | "major" }) => void;

let since = 0;

/** Counts `bytes` copied out of socket reads; collects the young generation every EVERY_BYTES. */
export function copiedOut(bytes: number): void {
  since += bytes;
  if (since < EVERY_BYTES) return;
  since = 0;
  gc({ type: "minor" });
}
