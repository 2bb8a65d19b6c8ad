// What a network's WebSockets hold per caller and per client IP: open sockets (handshakes under way included)
// and subscriptions. Free keys are self-service, so a client address is held to its share across its keys.
import { GatewayError } from "../../errors.js";

export interface SocketBudgetLimits {
  maxSocketsPerCaller: number;
  maxSocketsPerIp: number;
  maxSubscriptionsPerIp: number;
}

export class SocketBudgets {
  /** Open sockets per caller (the key as presented, else the IP). */
  private readonly perCaller = new Map<string, number>();
  private readonly socketsPerIp = new Map<string, number>();
  private readonly subscriptionsPerIp = new Map<string, number>();

  constructor(private readonly limits: SocketBudgetLimits) {}

  /** Takes a socket for `who` (and `ip`, when counted per address), or says why not. */
  open(who: string, ip: string | undefined): GatewayError | undefined {
    const { limits } = this;
    if ((this.perCaller.get(who) ?? 0) >= limits.maxSocketsPerCaller)
      return new GatewayError("rate_limited", `limit exceeded: at most ${limits.maxSocketsPerCaller} open WebSockets per caller`);
    if (ip !== undefined && (this.socketsPerIp.get(ip) ?? 0) >= limits.maxSocketsPerIp)
      return new GatewayError("rate_limited", `limit exceeded: at most ${limits.maxSocketsPerIp} open WebSockets per client address, across its keys`);
    count(this.perCaller, who, 1);
    if (ip !== undefined) count(this.socketsPerIp, ip, 1);
    return undefined;
  }

  /** A socket closed, with the subscriptions it held. */
  closed(who: string, ip: string | undefined, subscriptions: number): void {
    count(this.perCaller, who, -1);
    if (ip === undefined) return;
    count(this.socketsPerIp, ip, -1);
    count(this.subscriptionsPerIp, ip, -subscriptions);
  }

  /** Takes one subscription for `ip` (none counted when undefined), or throws the refusal. */
  subscribe(ip: string | undefined): void {
    if (ip === undefined) return;
    if ((this.subscriptionsPerIp.get(ip) ?? 0) >= this.limits.maxSubscriptionsPerIp)
      throw new GatewayError("rate_limited", `limit exceeded: at most ${this.limits.maxSubscriptionsPerIp} subscriptions per client address, across its keys`);
    count(this.subscriptionsPerIp, ip, 1);
  }

  unsubscribed(ip: string | undefined): void {
    if (ip !== undefined) count(this.subscriptionsPerIp, ip, -1);
  }
}

function count(m: Map<string, number>, key: string, delta: number): void {
  const n = (m.get(key) ?? 0) + delta;
  if (n <= 0) m.delete(key);
  else m.set(key, n);
}
