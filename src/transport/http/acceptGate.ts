// Which connections are refused at accept. net.Server consults its blockList for each accepted handle before
// it makes a Socket: a handle refused there is closed at once, unread, so a flood of refused connections
// leaves no Socket whose native handle waits for a full collection (one did: +6-9 MB a second). Refusals
// still to be told (a 503, the owed GOAWAY) are let through to the connection listener.
import net from "node:net";
import { normalise, type ProxyMatcher } from "./clientIp.js";
import { type ConnectionSlots, PerSecond } from "./connectionSlots.js";
import type { H2Server } from "./h2Server.js";

/** Connections past a cap answered 503 per IP and second; the rest are closed at accept. */
const REFUSALS_TOLD_PER_SECOND = 20;

export type AcceptRefusal = "h2_backoff" | "connection_cap" | "connection_rate";

export interface AcceptGateOptions {
  h2: Pick<H2Server, "banned" | "owesNotice">;
  slots: ConnectionSlots;
  /** Whether the port holds its overall cap. */
  portFull: () => boolean;
  newConnectionsPerIpPerSecond: number;
  /** Trusted proxies: many clients behind one address, never refused here (their clients get the 503). */
  exempt?: ProxyMatcher | undefined;
  refused?: ((why: AcceptRefusal) => void) | undefined;
}

export class AcceptGate extends net.BlockList {
  private readonly told = new PerSecond();
  private readonly opened = new PerSecond();

  constructor(private readonly o: AcceptGateOptions) {
    super();
  }

  /** True: closed at accept. An IP in its HTTP/2 back-off (but its one owed GOAWAY); past a cap or its rate, once told this second. */
  override check(address: string | net.SocketAddress): boolean {
    const ip = normalise(typeof address === "string" ? address : address.address);
    if (this.o.h2.banned(ip)) {
      if (this.o.h2.owesNotice(ip)) return false;
      this.o.refused?.("h2_backoff");
      return true;
    }
    if (this.o.exempt?.has(ip)) return false;
    const tooFast = this.opened.count(ip) > this.o.newConnectionsPerIpPerSecond;
    if (!(tooFast || this.o.portFull() || this.o.slots.full(ip)) || this.told.count(ip) <= REFUSALS_TOLD_PER_SECOND) return false;
    this.o.refused?.(tooFast ? "connection_rate" : "connection_cap");
    return true;
  }

  /** Whether `ip` is past its new connections this second (a connection let through is told so). */
  tooFast(ip: string): boolean {
    return !this.o.exempt?.has(ip) && this.opened.seen(ip) > this.o.newConnectionsPerIpPerSecond;
  }
}
