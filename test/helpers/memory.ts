// The process's memory as the system sees it, for tests of what a gateway in this process gives back.
import v8 from "node:v8";
import vm from "node:vm";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

export const MB = 1024 * 1024;

export const rss = (): number => process.memoryUsage().rss;

/** Collects garbage a few times over `ms`, so what the gateway let go is freed before RSS is read. */
export async function settle(ms = 2_000): Promise<void> {
  for (let waited = 0; waited < ms; waited += 250) {
    gc();
    await new Promise((r) => setTimeout(r, 250));
  }
  gc();
}

/** RSS's highest reading, sampled every 20 ms until `stop()`. */
export function peakRss(): { stop: () => number } {
  let peak = rss();
  const timer = setInterval(() => (peak = Math.max(peak, rss())), 20);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rss());
    },
  };
}
