// What "others" see while an attack runs: a steady caller's request latencies, and the longest the event loop
// of this process (where test gateways run) was held. Started before the attack, stopped after it.
import { spawn, spawnSync } from "node:child_process";
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
      return report(latencies, loop.max / 1e6);
    },
  };
}

function report(latencies: number[], loopMax: number): StallReport {
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? 0;
  return { latencies, p50: at(0.5), p99: at(0.99), worst: latencies[latencies.length - 1] ?? 0, loopMax };
}

let canRealTime: boolean | undefined;
/** Whether this machine lets us run a process at a real-time priority (root, or CAP_SYS_NICE). */
function realTime(): boolean {
  canRealTime ??= spawnSync("chrt", ["-f", "10", "true"]).status === 0;
  return canRealTime;
}

/**
 * The same caller from a process of its own (latencyProbe.mjs): POSTs `body` to `url`, a pause of `gapMs`
 * between. For a gateway in its own process, so that neither the test runner's pauses nor a load the test
 * sends are in the latencies. Where the machine allows, at a real-time priority: a caller on another machine
 * never waits for a core, and on two cores one that does was seen held 8-13 ms by its own scheduling, which
 * the latencies would charge to the gateway. `loopMax` is the probe's own loop (a few ms: its timer's grain).
 */
export async function startProbeProcess(url: string, body: string, gapMs = 10): Promise<{ stop(): Promise<StallReport> }> {
  const [command, ...argv] = [...(realTime() ? ["chrt", "-f", "10"] : []), process.execPath, "test/helpers/latencyProbe.mjs", url, body, String(gapMs)];
  const child = spawn(command!, argv, { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", () => out.startsWith("ready\n") && resolve());
    void exited.then(() => reject(new Error(`the latency probe exited before it was ready: ${out}`)));
  });
  return {
    async stop() {
      child.stdin!.write("stop\n");
      await exited;
      const { latencies, loopMax } = JSON.parse(out.slice("ready\n".length)) as { latencies: number[]; loopMax: number };
      return report(latencies, loopMax);
    },
  };
}
