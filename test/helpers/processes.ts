import { execFileSync } from "node:child_process";
// Whether a process is still there (signal 0 checks without signalling), for tests that make sure nothing
// the gateway started is left running.
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `pid` (children, theirs, …). */
export function descendants(pid: number): number[] {
  let kids: number[] = [];
  try {
    kids = execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    // none
  }
  return kids.flatMap((k) => [k, ...descendants(k)]);
}
