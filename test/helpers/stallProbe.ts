// What "others" see while an attack runs: a steady caller's request latencies, and the longest the event loop
// of this process (where test gateways run) was held. Started before the attack, stopped after it.
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface StallReport {
  /** Latencies of the probe's requests, ms, sorted. */
  latencies: number[];
  p50: number;
  p99: number;
  /** The worst single request. */
  worst: number;
  /** The longest event-loop delay seen, ms. */
  loopMax: number;
}

/** Sends `request` one after another (a pause of `gapMs` between) until stop() is called. */
export function startStallProbe(request: () => Promise<unknown>, gapMs = 10): { stop(): Promise<StallReport> } {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t = performance.now();
      await request();
      latencies.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, gapMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      loop.disable();
      latencies.sort((a, b) => a - b);
      const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? 0;
      return { latencies, p50: at(0.5), p99: at(0.99), worst: latencies[latencies.length - 1] ?? 0, loopMax: loop.max / 1e6 };
    },
  };
}
