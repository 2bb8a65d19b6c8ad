// Time for measuring (rate-limit windows, breakers, back-offs, caches, idle timeouts): the monotonic clock. A
// step of the wall clock (NTP, an operator, a VM resumed) must not stretch or end them: a key limited to 60 a
// minute was refused for 2 hours after the clock went 2 hours ahead and back. Wall time only where a calendar
// is meant (per-day quotas, retention, Date headers, journal timestamps).
/** Milliseconds on the monotonic clock (since the process started): only differences mean anything. */
export function monotonicNow(): number {
  return performance.now();
}
