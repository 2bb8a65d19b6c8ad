// Freed native memory given back to the system. glibc keeps what nghttp2's frames, zlib and other native
// allocations free in its arenas, so a process's RSS stays up long after a burst (HTTP/2 slow readers, say)
// is gone; malloc_trim(0) returns those free pages. Called on a timer, on koffi's worker thread (a trim takes
// a few ms and locks one arena at a time, never the event loop). Linux with glibc only; elsewhere nothing.
import { createRequire } from "node:module";
import type * as Koffi from "koffi";
import type { Logger } from "../log/logger.js";

type Trim = ((pad: number) => number) & { async: (pad: number, done: (err: unknown, freed: number) => void) => void };

function loadTrim(): Trim | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  if (process.platform !== "linux" || !header?.glibcVersionRuntime) return undefined;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as typeof Koffi;
    return koffi.load("libc.so.6").func("int malloc_trim(size_t pad)") as unknown as Trim;
  } catch {
    return undefined;
  }
}

/** Trims every `intervalMs` (0: never); the stop function. */
export function startTrimming(intervalMs: number, log: Logger): () => void {
  const trim = intervalMs > 0 ? loadTrim() : undefined;
  if (!trim) return () => undefined;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    trim.async(0, (err) => {
      running = false;
      if (err) log.debug("malloc_trim failed", { error: String(err) });
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
