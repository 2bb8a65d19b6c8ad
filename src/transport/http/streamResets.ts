// HTTP/2 streams a client resets before they are answered (the "rapid reset" pattern: HEADERS then RST_STREAM,
// reconnecting on every GOAWAY) cost the server stream set-up for nothing. nghttp2 ends one session after
// 1,000 of them, but a client that reconnects starts again, and every other caller waits behind the handler
// work. Counted per client IP over a sliding window, so reconnecting does not reset the
// count; an IP past the budget has its sessions ended (GOAWAY ENHANCE_YOUR_CALM) and its new h2 connections
// refused for a back-off that doubles each time (up to 10 minutes). Counted under the address's ipKey (an
// IPv6 /64: a new address per connection is free inside one).
import { monotonicNow } from "../../clock.js";
import { DoublingDelay } from "../../resilience/doublingDelay.js";
import { ipKey } from "./clientIp.js";
export interface StreamResetOptions {
  /** Resets tolerated per IP per window. */
  budget: number;
  windowMs: number;
  /** The first back-off; each later one doubles. */
  backoffMs: number;
  exempt?: Pick<ReadonlySet<string>, "has">;
}

interface IpState {
  windowStart: number;
  count: number;
  bannedUntil: number;
  /** Made at the IP's first ban. */
  ban: DoublingDelay | undefined;
}

const MAX_BACKOFF_MS = 10 * 60_000;

export class StreamResets {
  private readonly byIp = new Map<string, IpState>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: StreamResetOptions) {
    // IPs quiet for a while are forgotten (their back-off too, once over): the map stays bounded.
    this.sweeper = setInterval(() => {
      const now = monotonicNow();
      for (const [ip, s] of this.byIp) if (now - s.windowStart > 2 * options.windowMs && now > s.bannedUntil) this.byIp.delete(ip);
    }, options.windowMs).unref();
  }

  /** One reset stream from `ip`; true when that takes the IP past its budget (it is banned from now). */
  note(ip: string): boolean {
    if (this.options.exempt?.has(ip)) return false;
    const now = monotonicNow();
    const key = ipKey(ip);
    let s = this.byIp.get(key);
    if (!s) this.byIp.set(key, (s = { windowStart: now, count: 0, bannedUntil: 0, ban: undefined }));
    if (now - s.windowStart > this.options.windowMs) {
      s.windowStart = now;
      s.count = 0;
    }
    if (++s.count <= this.options.budget || now < s.bannedUntil) return false;
    s.ban ??= new DoublingDelay({ firstMs: this.options.backoffMs, maxMs: MAX_BACKOFF_MS });
    s.bannedUntil = now + s.ban.next();
    s.count = 0;
    return true;
  }

  /** Whether `ip` is in its back-off now. */
  banned(ip: string): boolean {
    const s = this.byIp.get(ipKey(ip));
    return s !== undefined && monotonicNow() < s.bannedUntil;
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
