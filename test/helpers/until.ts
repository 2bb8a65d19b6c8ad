// Waits for a condition the code under test reaches on its own time (a head arriving, a socket closing):
// checked every 20 ms, and a clear failure after `ms` rather than a test that hangs to vitest's timeout.
export async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
