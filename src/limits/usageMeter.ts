// What each key used, for its holder to see (GET /zgt/<key>/usage, RpcService.GetUsage): requests (in
// units, as the limits count them) and writes, per hour, for the last 30 days. In this process: a replica
// counts what it served (with several, each answers for its own share).

const HOUR_MS = 3_600_000;
/** Hours kept: a month's worth (the monthly figures and quota are 30 days). */
const KEPT_HOURS = 30 * 24;

export interface UsageReport {
  requests: { minute: number; day: number; month: number };
  writes: { day: number; month: number };
  /** The last 24 hours, oldest first, each starting on the hour (ms). */
  hourly: { hour: number; requests: number; writes: number }[];
}

/** A key's requests on one network: hour (ms since epoch, on the hour) → requests, hours in ascending order; and this minute's. */
interface KeyRequests {
  hours: Map<number, number>;
  minute: { at: number; requests: number };
}

export class UsageMeter {
  /** Per network, then key (nested: no key string is built per request, and the key's own string is hashed once). */
  private readonly requestsBy = new Map<string, Map<string, KeyRequests>>();
  /** Per key (write quotas span the networks): hour → writes. */
  private readonly writesBy = new Map<string, Map<number, number>>();

  /** Requests are counted per network, as the request limits are (they said both networks' sum). */
  requests(network: string, keyId: string, units: number, now = Date.now()): void {
    let byKey = this.requestsBy.get(network);
    if (!byKey) this.requestsBy.set(network, (byKey = new Map()));
    let r = byKey.get(keyId);
    if (!r) byKey.set(keyId, (r = { hours: new Map(), minute: { at: 0, requests: 0 } }));
    addTo(r.hours, units, now);
    const thisMinute = now - (now % 60_000);
    if (r.minute.at === thisMinute) r.minute.requests += units;
    else r.minute = { at: thisMinute, requests: units };
  }

  write(keyId: string, now = Date.now()): void {
    add(this.writesBy, keyId, 1, now);
  }

  report(network: string, keyId: string, now = Date.now()): UsageReport {
    const r = this.requestsBy.get(network)?.get(keyId);
    const requests = r?.hours ?? new Map<number, number>();
    const writes = this.writesBy.get(keyId) ?? new Map<number, number>();
    const current = now - (now % HOUR_MS);
    const sum = (hours: Map<number, number>, fromHour: number) => {
      let n = 0;
      for (const [h, c] of hours) if (h >= fromHour) n += c;
      return n;
    };
    const dayFrom = current - 23 * HOUR_MS;
    const monthFrom = current - (KEPT_HOURS - 1) * HOUR_MS;
    const m = r?.minute;
    return {
      requests: { minute: m && m.at === now - (now % 60_000) ? m.requests : 0, day: sum(requests, dayFrom), month: sum(requests, monthFrom) },
      writes: { day: sum(writes, dayFrom), month: sum(writes, monthFrom) },
      hourly: Array.from({ length: 24 }, (_, i) => {
        const hour = current - (23 - i) * HOUR_MS;
        return { hour, requests: requests.get(hour) ?? 0, writes: writes.get(hour) ?? 0 };
      }),
    };
  }
}

/** Adds `n` to `id`'s count for the hour of `now`; a new hour drops what fell out of the month. */
function add(by: Map<string, Map<number, number>>, id: string, n: number, now: number): void {
  let hours = by.get(id);
  if (!hours) by.set(id, (hours = new Map()));
  addTo(hours, n, now);
}

function addTo(hours: Map<number, number>, n: number, now: number): void {
  const at = now - (now % HOUR_MS);
  const had = hours.get(at);
  hours.set(at, (had ?? 0) + n);
  if (had === undefined)
    for (const old of hours.keys()) {
      if (old > at - KEPT_HOURS * HOUR_MS) break;
      hours.delete(old);
    }
}
