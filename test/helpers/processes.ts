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
