// Open connections per client IP: the port's overall cap (http.maxConnections) could be taken whole by one
// address (10,000 idle sockets from one IP refused 343 of 395 other clients). Each IP may hold at most its
// share; a trusted proxy (a load balancer, many clients behind one address) only the overall cap. Counted
// under the address's ipKey (an IPv6 /64), exempt by the address itself.
import { ipKey } from "./clientIp.js";

export class ConnectionSlots {
  private readonly byIp = new Map<string, number>();

  constructor(
    private readonly perIp: number,
    private readonly exempt: Pick<ReadonlySet<string>, "has"> = new Set<string>(),
  ) {}

  /** Takes a slot for a new connection from `ip`; false when the IP holds its share already. */
  take(ip: string): boolean {
    const key = ipKey(ip);
    const n = this.byIp.get(key) ?? 0;
    if (n >= this.perIp && !this.exempt.has(ip)) return false;
    this.byIp.set(key, n + 1);
    return true;
  }

  give(ip: string): void {
    const key = ipKey(ip);
    const n = (this.byIp.get(key) ?? 1) - 1;
    if (n <= 0) this.byIp.delete(key);
    else this.byIp.set(key, n);
  }

  /** Whether `ip` holds its share (a new connection would be refused). */
  full(ip: string): boolean {
    return (this.byIp.get(ipKey(ip)) ?? 0) >= this.perIp && !this.exempt.has(ip);
  }

  /** Connections open from `ip` now. */
  held(ip: string): number {
    return this.byIp.get(ipKey(ip)) ?? 0;
  }
}

/**
 * Events per IP in the current second (new connections, refusals told): a fixed one-second window, so its map
 * holds at most the IPs seen within one second.
 */
export class PerSecond {
  private readonly byIp = new Map<string, number>();
  private windowStart = 0;

  /** Counts one event of `ip` (under its ipKey); its count this second, this one included. */
  count(ip: string): number {
    const now = performance.now();
    if (now - this.windowStart >= 1_000) {
      this.byIp.clear();
      this.windowStart = now;
    }
    const key = ipKey(ip);
    const n = (this.byIp.get(key) ?? 0) + 1;
    this.byIp.set(key, n);
    return n;
  }

  /** `ip`'s count this second, counting nothing. */
  seen(ip: string): number {
    return performance.now() - this.windowStart >= 1_000 ? 0 : (this.byIp.get(ipKey(ip)) ?? 0);
  }
}
