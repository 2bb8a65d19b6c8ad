// Finding glibc's malloc_trim formats no stack trace. It once asked process.report.getReport() whether the
// libc is glibc; a report formats the JS stack, and with --enable-source-maps (npm start) that parsed the whole
// bundle's source map at start: ~14 MB of heap (88,000 arrays) held for the process's life, marked by every
// full collection after.
import { afterEach, describe, expect, it } from "vitest";
import { startTrimming } from "../../src/memory/trimFreed.js";
import { createLogger } from "../../src/log/logger.js";

describe("startTrimming", () => {
  const prepare = Error.prepareStackTrace;
  afterEach(() => {
    Error.prepareStackTrace = prepare;
  });

  it("finds malloc_trim without formatting a stack trace", () => {
    let formatted = 0;
    Error.prepareStackTrace = (err, frames) => {
      formatted++;
      return prepare ? prepare(err, frames) : String(err);
    };
    // Sanity: this counter sees a formatted stack.
    void new Error("counted").stack;
    expect(formatted).toBe(1);
    const stop = startTrimming(60_000, createLogger("error"));
    stop();
    Error.prepareStackTrace = prepare;
    expect(formatted).toBe(1);
  });
});
