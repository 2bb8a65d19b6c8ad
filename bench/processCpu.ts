// Another process's CPU time so far, in ms: the sum of its threads' run time in ns from schedstat
// (/proc/<pid>/stat's utime and stime come in 10 ms ticks, too coarse for a second-long measurement).
import { readdirSync, readFileSync } from "node:fs";

export function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns / 1e6;
}
