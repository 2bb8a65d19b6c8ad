// Freed native memory given back to the system. glibc keeps what nghttp2's frames, zlib and other native
// allocations free in its arenas, so a process's RSS stays up long after a burst (HTTP/2 slow readers, say)
// is gone; malloc_trim(0) returns those free pages. Called on a timer, on koffi's worker thread (a trim takes
// a few ms and locks one arena at a time, never the event loop). Linux with glibc only; elsewhere nothing.
// Before it, a burst's garbage is collected when RSS says there is some (burstCollector).
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import type * as Koffi from "koffi";
import type { Logger } from "../log/logger.js";
import { gc } from "./exposedGc.js";

type Trim = ((pad: number) => number) & { async: (pad: number, done: (err: unknown, freed: number) => void) => void };

/**
 * glibc's malloc_trim, found by glibc's own symbols rather than process.report.getReport(): a report formats
 * the JS stack, which with --enable-source-maps parses the whole bundle's source map at start.
 */
function loadTrim(): Trim | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as typeof Koffi;
    const libc = koffi.load("libc.so.6");
    // glibc only: elsewhere the load or a lookup throws.
    libc.func("const char *gnu_get_libc_version()");
    return libc.func("int malloc_trim(size_t pad)") as unknown as Trim;
  } catch {
    return undefined;
  }
}

/** RSS this far over the least seen (and at least BURST_MIN_BYTES over) is a burst's garbage, worth a collection. */
const BURST_GROWTH = 1.2;
const BURST_MIN_BYTES = 16 * 1024 * 1024;
/** The event loop's busy share below which a tick counts as quiet. */
const QUIET_UTILIZATION = 0.1;
/** Quiet ticks in a row before a burst counts as over. */
const QUIET_TICKS = 3;
/** A collection that left RSS up (the memory is in use) waits twice as long before the next, up to this many ticks. */
const MAX_BACKOFF_TICKS = 64;

/**
 * Trims every `intervalMs` (0: never); the stop function. Memory a burst left for the GC (sockets closed,
 * their buffers unreferenced) is native memory V8 does not see, so no collection comes for it while the heap
 * is quiet: when RSS stands well over the least it has been, a memory-reducing collection runs first,
 * backing off while the memory turns out to be in use.
 */
export function startTrimming(intervalMs: number, log: Logger): () => void {
  if (intervalMs <= 0) return () => undefined;
  const trim = loadTrim();
  const collect = burstCollector();
  let since = performance.eventLoopUtilization();
  let running = false;
  const timer = setInterval(() => {
    const quiet = performance.eventLoopUtilization(since).utilization <= QUIET_UTILIZATION;
    since = performance.eventLoopUtilization();
    collect(quiet);
    if (running || !trim) return;
    running = true;
    trim.async(0, (err) => {
      running = false;
      if (err) log.debug("malloc_trim failed", { error: String(err) });
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * One tick's decision: a full collection when RSS is a burst over the least seen and the burst is over
 * (QUIET_TICKS quiet ticks in a row: a busy gateway allocates, and V8 collects on its own).
 */
function burstCollector(): (quiet: boolean) => void {
  let least = Number.POSITIVE_INFINITY;
  let wait = 0;
  let backoff = 1;
  let quietTicks = 0;
  return (quiet) => {
    quietTicks = quiet ? quietTicks + 1 : 0;
    const rss = process.memoryUsage.rss();
    least = Math.min(least, rss);
    // A lull between bursts of work is not the end of one: a collection then only makes V8 and glibc grow
    // their heaps again.
    if (quietTicks < QUIET_TICKS) return;
    const burst = rss > least * BURST_GROWTH && rss - least > BURST_MIN_BYTES;
    if (!burst) {
      backoff = 1;
      wait = 0;
      return;
    }
    if (wait-- > 0) return;
    // A plain major collection first. If RSS stays up, the next is memory-reducing (V8's last-resort flavour,
    // two or more collections): a plain one frees the garbage but keeps the pages it filled pooled until V8's
    // own memory reducer, seconds later or never on a busy heap.
    void gc({ type: "major", flavor: backoff === 1 ? "regular" : "last-resort" });
    wait = backoff;
    backoff = Math.min(backoff * 2, MAX_BACKOFF_TICKS);
  };
}
