// Request bodies still arriving are held in memory whole (a route reads its JSON at once), so they are
// budgeted: all of them together, and each client IP's share, in bytes. A body that does not fit is refused
// (503, Retry-After) before it is read, rather than buffered for as long as the request timeout lets slow
// senders hold it. A load balancer named in TRUSTED_PROXIES carries
// everyone's bodies: only the total applies to it. Counted under the address's ipKey (an IPv6 /64).
import { ipKey } from "./clientIp.js";

export interface BodyBudgetOptions {
  totalBytes: number;
  perIpBytes: number;
  /**
   * One HTTP/2 session's share: its streams' bodies are read as they arrive (flow-control windows are given
   * back as fast as the bytes are taken), so the windows alone never bounded what one session holds; this
   * does. Trusted proxies exempt, as their sessions carry everyone's.
   */
  perSessionBytes?: number;
  /** IPs exempt from the per-IP share (trusted proxies). */
  exempt?: Pick<ReadonlySet<string>, "has">;
}

export class BodyBudget {
  private used = 0;
  private readonly byIp = new Map<string, number>();
  private readonly bySession = new WeakMap<object, number>();

  constructor(private readonly options: BodyBudgetOptions) {}

  /**
   * Reserves `bytes` for a body from `ip` (on HTTP/2 `session`); false when the total, the IP's share or the
   * session's would be passed.
   */
  reserve(ip: string, bytes: number, session?: object): boolean {
    if (this.used + bytes > this.options.totalBytes) return false;
    const key = ipKey(ip);
    const mine = this.byIp.get(key) ?? 0;
    const exempt = this.options.exempt?.has(ip) ?? false;
    if (!exempt && mine + bytes > this.options.perIpBytes) return false;
    if (session && !exempt && this.options.perSessionBytes !== undefined) {
      const its = this.bySession.get(session) ?? 0;
      if (its + bytes > this.options.perSessionBytes) return false;
      this.bySession.set(session, its + bytes);
    }
    this.used += bytes;
    this.byIp.set(key, mine + bytes);
    return true;
  }

  /** Like reserve (no session), but an IP holding nothing is always granted this one (one answer of any size). */
  reserveOrFirst(ip: string, bytes: number): boolean {
    if (this.reserve(ip, bytes)) return true;
    const key = ipKey(ip);
    if (this.byIp.has(key)) return false;
    this.used += bytes;
    this.byIp.set(key, bytes);
    return true;
  }

  /** Whether `ip` already holds its whole share (trusted proxies never do). */
  full(ip: string): boolean {
    return !(this.options.exempt?.has(ip) ?? false) && (this.byIp.get(ipKey(ip)) ?? 0) >= this.options.perIpBytes;
  }

  release(ip: string, bytes: number, session?: object): void {
    this.used -= bytes;
    const key = ipKey(ip);
    const left = (this.byIp.get(key) ?? bytes) - bytes;
    if (left <= 0) this.byIp.delete(key);
    else this.byIp.set(key, left);
    const its = session && this.bySession.get(session);
    if (its !== undefined && session) this.bySession.set(session, its - bytes);
  }

  /** Bytes reserved now (metrics, tests). */
  get inUse(): number {
    return this.used;
  }
}

/** The answer to a body refused for memory: plain HTTP/1.1, the connection closed after it. */
export const BODY_BUDGET_EXCEEDED = (() => {
  const body = JSON.stringify({ error: "the server is receiving too many request bodies at once; try again shortly" });
  return (
    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n" +
    `connection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`
  );
})();
