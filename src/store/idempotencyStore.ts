// Idempotency keys: a retried write gets the first one's outcome for 24 h, across replicas and transports (the
// outcome is kept in the store, transport-neutral). Concurrent duplicates wait for the first. A first attempt that failed before its
// transaction was journaled leaves no trace (a retry runs); once journaled, its answer is kept, whatever it
// is (a receipt wait that timed out, a revert): a retry that ran again would send a second transaction.
import { createHash } from "node:crypto";
import type { IdempotencyTable } from "./idempotencyTable.js";
import { GatewayError, errorKinds, type ErrorKind, type JsonValue } from "../errors.js";

const TTL_MS = 24 * 3_600_000;
/**
 * Longer than any request runs (a wait for a receipt, a compile): see settleStale. The default of
 * IDEMPOTENCY_STALE_MS (config.ts), defined here beside the rule it serves.
 */
export const DEFAULT_STALE_CLAIM_MS = 10 * 60_000;
/** Longest key accepted (REST header and Connect field alike). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;
/** Status column of a kept success; anything else is a kept error's HTTP status (for operators reading rows). */
const OK = 200;

/** What a write run under a claim is given: where to say it was journaled, and the key to journal it under. */
export interface ClaimHooks {
  /** Call once the transaction is journaled (it will be sent, whatever happens next). */
  journaled(): void;
  /** Unique per claim (scope, key and the claim's time): the journal records the write under it. */
  journalKey: string;
}

export interface IdempotencyOptions {
  /** The journaled write recorded under a claim's journalKey, if any (for claims left by a stopped process). */
  findJournaled?: (journalKey: string) => Promise<{ queueId: string; hash: string } | undefined>;
  /** A claim this old without an answer was left by a process that stopped mid-request. */
  staleAfterMs?: number;
  /** How long a concurrent duplicate waits for the first request's outcome before it is told to retry. */
  waitMs?: number;
  /** How often it looks (config resilience.idempotencyPollMs). */
  pollMs?: number;
}

/**
 * Outcomes are kept transport-neutral: a success is the operation's value as text (its transport encodes and
 * decodes it), an error is a GatewayError's kind, message and details; each transport renders both its own way.
 */
export class IdempotencyStore {
  constructor(
    private readonly table: IdempotencyTable,
    private readonly options: IdempotencyOptions = {},
  ) {}

  /**
   * Runs fn once per (scope, key) and payload; its value, or its error, is the outcome every retry gets. fn
   * calls `journaled` once its transaction is journaled: from then on an error is kept too (a retry that ran
   * again would send a second transaction); before, an error leaves no trace and a retry runs. A retry with
   * another payload is refused (idempotency_mismatch). Kept errors, and the store's own, are thrown.
   */
  async once(scope: string, key: string, payload: string, fn: (hooks: ClaimHooks) => Promise<string>): Promise<{ value: string; replayed: boolean }> {
    return this.run(scope, key, fingerprintOf(payload), fn);
  }

  /** Forgets answers past their 24 h (a key is otherwise only cleared when it is used again). */
  prune(now = new Date()): Promise<number> {
    return this.table.prune(new Date(now.getTime() - TTL_MS));
  }

  private async run(
    scope: string,
    key: string,
    fingerprint: string,
    fn: (hooks: ClaimHooks) => Promise<string>,
  ): Promise<{ value: string; replayed: boolean }> {
    const claimedAt = await this.table.claim(scope, key, new Date(Date.now() - TTL_MS), fingerprint);
    if (!claimedAt) return this.waitForAnswer(scope, key, fingerprint, fn);
    let sent = false;
    let value: string;
    try {
      value = await fn({ journaled: () => void (sent = true), journalKey: journalKey(scope, key, claimedAt) });
    } catch (err) {
      if (!sent) {
        await this.table.release(scope, key);
        throw err;
      }
      // Kept as the error it is (a revert, a receipt wait that timed out), so a retry hears the same.
      const kept =
        err instanceof GatewayError ? err : new GatewayError("internal", "the write was journaled and will be sent, but its answer failed", { cause: err });
      await this.table.answer(scope, key, kept.httpStatus, encodeError(kept));
      throw kept;
    }
    await this.table.answer(scope, key, OK, value);
    return { value, replayed: false };
  }

  private async waitForAnswer(
    scope: string,
    key: string,
    fingerprint: string,
    fn: (hooks: ClaimHooks) => Promise<string>,
  ): Promise<{ value: string; replayed: boolean }> {
    const deadline = Date.now() + (this.options.waitMs ?? 120_000);
    for (;;) {
      const row = await this.table.read(scope, key);
      if (!row) return this.run(scope, key, fingerprint, fn); // the first attempt failed: this one runs
      // The same key with another payload is a client bug, not a retry: replaying the first answer would
      // tell it a write happened that it never asked for (IETF idempotency-key draft: 422).
      if (row.fingerprint !== null && row.fingerprint !== fingerprint) {
        throw new GatewayError("idempotency_mismatch", "this idempotency key was used with a different request payload; use a new key for a new request");
      }
      if (row.status !== null && row.body !== null) return replay(row.status, row.body);
      if (Date.now() - row.createdAt.getTime() > (this.options.staleAfterMs ?? DEFAULT_STALE_CLAIM_MS))
        return this.settleStale(scope, key, fingerprint, row.createdAt, fn);
      if (Date.now() > deadline) throw new GatewayError("idempotency_in_progress", "a request with this idempotency key is still in progress; retry later");
      await new Promise((r) => setTimeout(r, this.options.pollMs ?? 50));
    }
  }

  /**
   * A claim with no answer long after any request could still be running: its process stopped mid-request.
   * If it journaled the write, that write is sent (the journal is replayed) and the retry is told where to
   * follow it; if not, nothing was sent and the retry runs. Either way the claim is settled once, whichever
   * replica gets there first (the statements only act on the same unanswered claim).
   */
  private async settleStale(
    scope: string,
    key: string,
    fingerprint: string,
    createdAt: Date,
    fn: (hooks: ClaimHooks) => Promise<string>,
  ): Promise<{ value: string; replayed: boolean }> {
    const found = await this.options.findJournaled?.(journalKey(scope, key, createdAt));
    if (!found) {
      await this.table.release(scope, key, createdAt);
      return this.run(scope, key, fingerprint, fn);
    }
    const lost = new GatewayError(
      "upstream_unavailable",
      `the first request with this idempotency key was accepted, but its answer was lost when the gateway stopped; follow its queueId ${found.queueId}`,
      {
        details: { queueId: found.queueId, hash: found.hash },
      },
    );
    await this.table.answer(scope, key, lost.httpStatus, encodeError(lost), true);
    const row = await this.table.read(scope, key);
    return replay(row?.status ?? lost.httpStatus, row?.body ?? encodeError(lost));
  }
}

function encodeError(err: GatewayError): string {
  return JSON.stringify({
    kind: err.kind,
    message: err.message,
    details: err.details ?? null,
    ...(err.jsonRpcCode !== errorKinds[err.kind].jsonRpcCode ? { jsonRpcCode: err.jsonRpcCode } : {}),
  });
}

/** A kept outcome: the value, or its error thrown again as the GatewayError it was. */
function replay(status: number, body: string): { value: string; replayed: boolean } {
  if (status === OK) return { value: body, replayed: true };
  const e = JSON.parse(body) as { kind?: ErrorKind; message?: string; details?: JsonValue | null; jsonRpcCode?: number };
  // A row kept by a version before outcomes were neutral holds a transport's rendering: an internal error then.
  if (e.kind === undefined || !(e.kind in errorKinds))
    throw new GatewayError("internal", "the first request's outcome cannot be replayed; use a new idempotency key");
  throw new GatewayError(e.kind, e.message ?? "", {
    replayed: true,
    ...(e.details != null ? { details: e.details } : {}),
    ...(e.jsonRpcCode !== undefined ? { jsonRpcCode: e.jsonRpcCode } : {}),
  });
}

/** What a claim keeps of its request's payload: a digest (the payload may be a 1 MB contract source). */
export function fingerprintOf(payload: string): string {
  return createHash("sha256").update(payload).digest("base64url");
}

function journalKey(scope: string, key: string, claimedAt: Date): string {
  return `${scope}\n${key}\n${claimedAt.getTime()}`;
}
