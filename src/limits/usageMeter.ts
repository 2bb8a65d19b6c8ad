// What each key used (#54), for its holder to see (GET /zgt/<key>/usage, RpcService.GetUsage): requests (in
// units, as the limits count them) and writes, per hour, for the last 30 days. In this process: a replica
// counts what it served (with several, each answers for its own share).

const HOUR_MS = 3_600_000;
/** Hours kept: a month's worth (the monthly figures and quota are 30 days). */
const KEPT_HOURS = 30 * 24;

interface Hour {
  requests: number;
  writes: number;
}

export interface UsageReport {
  requests: { minute: number; day: number; month: number };
  writes: { day: number; month: number };
  /** The last 24 hours, oldest first, each starting on the hour (ms). */
  hourly: { hour: number; requests: number; writes: number }[];
}

export class UsageMeter {
  /** Per key: hour (ms since epoch, on the hour) → counts; hours in ascending order. */
  private readonly byKey = new Map<string, Map<number, Hour>>();
  /** Per key: the current minute's requests (for "this minute"). */
  private readonly minute = new Map<string, { at: number; requests: number }>();

  requests(keyId: string, units: number, now = Date.now()): void {
    this.hour(keyId, now).requests += units;
    const m = this.minute.get(keyId);
    const thisMinute = now - (now % 60_000);
    if (m && m.at === thisMinute) m.requests += units;
    else this.minute.set(keyId, { at: thisMinute, requests: units });
  }

  write(keyId: string, now = Date.now()): void {
    this.hour(keyId, now).writes++;
  }

  report(keyId: string, now = Date.now()): UsageReport {
    const hours = this.byKey.get(keyId) ?? new Map<number, Hour>();
    const current = now - (now % HOUR_MS);
    const sum = (fromHour: number) => {
      let requests = 0;
      let writes = 0;
      for (const [h, c] of hours)
        if (h >= fromHour) {
          requests += c.requests;
          writes += c.writes;
        }
      return { requests, writes };
    };
    const day = sum(current - 23 * HOUR_MS);
    const month = sum(current - (KEPT_HOURS - 1) * HOUR_MS);
    const m = this.minute.get(keyId);
    return {
      requests: { minute: m && m.at === now - (now % 60_000) ? m.requests : 0, day: day.requests, month: month.requests },
      writes: { day: day.writes, month: month.writes },
      hourly: Array.from({ length: 24 }, (_, i) => {
        const hour = current - (23 - i) * HOUR_MS;
        const c = hours.get(hour);
        return { hour, requests: c?.requests ?? 0, writes: c?.writes ?? 0 };
      }),
    };
  }

  private hour(keyId: string, now: number): Hour {
    const at = now - (now % HOUR_MS);
    let hours = this.byKey.get(keyId);
    if (!hours) this.byKey.set(keyId, (hours = new Map()));
    let h = hours.get(at);
    if (!h) {
      hours.set(at, (h = { requests: 0, writes: 0 }));
      // A new hour: what fell out of the month goes (oldest first: insertion order).
      for (const old of hours.keys()) {
        if (old > at - KEPT_HOURS * HOUR_MS) break;
        hours.delete(old);
      }
    }
    return h;
  }
}
