// A collection of V8's young generation, asked for while large bodies stream in. A socket read (64 KB) copied
// into a body's spill is dropped at once, but its memory is freed only when the GC gets to the Buffer, and V8
// waits for tens of MB of them; glibc's heap grows by what piles up meanwhile and keeps the space (after a
// 200 MB upstream answer, RSS stayed up to 39 % over its start; [heap] 8 -> 53 MB). A young collection every
// 4 MB of such bytes frees them as they go ([heap] 8 -> 16 MB, RSS +6 to +10 %; every 8 MB: +11 to +15 %).
// Only bodies past largeBody.ts's spill line pay it: collecting a 5 MB body from 64 KB reads took 8.3 ms
// without it and 10.9 with it (medians of three runs), a few % of what serving such a body costs.
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
