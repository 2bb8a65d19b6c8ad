// Whether the store (PostgreSQL, or the embedded SQLite file) can take writes right now. A connection lost, a
// database shut down or a full disk is an outage, not a bug: the write is refused with 503 ("journal
// unavailable", nothing journaled, so nothing acknowledged), readiness turns false so a load balancer drains
// this replica, and a probe watches for the store's return. A query's own error (a constraint, a syntax error)
// is none of these and passes through unchanged.
import { GatewayError } from "../errors.js";

/** PostgreSQL SQLSTATE classes that mean "the server is not there for you": connection exceptions, shutdowns, resources. */
const PG_OUTAGE = /^(08|53|57P0|57014)/; // 57014: statement_timeout, the server's half of a deadline
/** What node-postgres and Node's sockets say when the connection itself fails. */
const SOCKET_OUTAGE = /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/;
const PG_CLIENT_OUTAGE = /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed|Query read timeout/i;
/** SQLite result codes (node:sqlite's errcode; the extended codes keep the primary one in the low byte). */
const SQLITE_OUTAGE = new Set([10 /* IOERR */, 13 /* FULL */, 14 /* CANTOPEN */, 8 /* READONLY */]);

/** The reason `err` is a store outage, or undefined when it is a query's own error. */
export function outageReason(err: unknown): string | undefined {
  if (err instanceof GatewayError) return undefined;
  const e = err as { code?: unknown; errcode?: unknown; message?: unknown };
  if (typeof e.errcode === "number" && SQLITE_OUTAGE.has(e.errcode & 0xff)) return e.errcode % 256 === 13 ? "the disk is full" : String(e.message);
  if (typeof e.code === "string" && (SOCKET_OUTAGE.test(e.code) || (e.code.length === 5 && PG_OUTAGE.test(e.code)))) return e.code;
  if (typeof e.message === "string" && typeof e.code !== "string" && PG_CLIENT_OUTAGE.test(e.message)) return e.message;
  return undefined;
}

export class StoreHealth {
  private down: { since: number; reason: string } | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** `probe` answers (resolves) when the store works again: a `select 1`, or a small write on a full disk. */
  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly onChange: (available: boolean, reason?: string) => void = () => undefined,
    private readonly probeMs = 1_000,
  ) {}

  get available(): boolean {
    return this.down === undefined;
  }

  /** Why the store is unavailable, for /readyz. */
  get reason(): string | undefined {
    return this.down?.reason;
  }

  /** A successful statement: the store works. */
  ok(): void {
    if (this.down === undefined) return;
    this.down = undefined;
    clearTimeout(this.probeTimer);
    this.onChange(true);
  }

  /**
   * What to throw for `err`: a 503 GatewayError when it is an outage (which is noted, and probed until it
   * ends), else `err` itself.
   */
  fault(err: unknown): unknown {
    const reason = outageReason(err);
    if (reason === undefined) return err;
    this.markDown(reason);
    // A commit sent without an answer may have landed: the caller is told, not promised "nothing was done".
    if ((err as { commitUnknown?: boolean }).commitUnknown)
      return new GatewayError("upstream_unavailable", `the journal did not confirm in time (${reason}); what was being recorded may have been`, {
        retryAfterSeconds: 2,
        cause: err,
        details: { recorded: "unknown" },
      });
    return this.refusal(err);
  }

  /** Statements wait with no answer at all (a frozen path): down now, before their own deadlines. */
  stalled(reason: string): void {
    this.markDown(reason);
  }

  /** The 503 for a call made (or refused) while the store is down. */
  refusal(cause?: unknown): GatewayError {
    return new GatewayError("upstream_unavailable", `the journal is unavailable (${this.down?.reason ?? "outage"}); nothing was done, try again shortly`, {
      retryAfterSeconds: 2,
      ...(cause !== undefined ? { cause } : {}),
    });
  }

  private markDown(reason: string): void {
    if (this.down !== undefined) return;
    this.down = { since: Date.now(), reason };
    this.onChange(false, reason);
    this.scheduleProbe();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.probeTimer);
  }

  private scheduleProbe(): void {
    if (this.closed) return;
    this.probeTimer = setTimeout(() => {
      this.probe().then(
        () => this.ok(),
        () => {
          if (this.down !== undefined) this.scheduleProbe();
        },
      );
    }, this.probeMs);
    this.probeTimer.unref();
  }
}
