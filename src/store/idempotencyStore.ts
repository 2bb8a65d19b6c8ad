// Idempotency-Key: a retried write returns the first one's answer for 24 h, across replicas (the answer is
// kept in the store). Concurrent duplicates wait for the first. A first attempt that failed before its
// transaction was journaled leaves no trace (a retry runs); once journaled, its answer is kept, whatever it
// is (a receipt wait that timed out, a revert): a retry that ran again would send a second transaction.
import { createHash } from "node:crypto";
import type { IdempotencyTable } from "./idempotencyTable.js";
import { GatewayError } from "../errors.js";

export interface StoredAnswer {
  status: number;
  body: string;
}

const TTL_MS = 24 * 3_600_000;
/**
 * Longer than any request runs (a wait for a receipt, a compile): see settleStale. The default of
 * IDEMPOTENCY_STALE_MS (config.ts), defined here beside the rule it serves.
 */
export const DEFAULT_STALE_CLAIM_MS = 10 * 60_000;
/** Longest key accepted (REST header and Connect field alike). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

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
}

/** An answer in the caller's transport format, for an error (see once's `render`). */
export type RenderError = (err: GatewayError) => StoredAnswer;

export class IdempotencyStore {
  constructor(
    private readonly table: IdempotencyTable,
    private readonly options: IdempotencyOptions = {},
  ) {}

  /**
   * Runs fn once per (scope, key). fn calls `journaled` once its transaction is journaled: from then on its
   * answer is kept whatever its status; before, only a 2xx answer is (a refusal can be retried). fn may
   * answer its own errors or throw them: one thrown after `journaled` is kept (a GatewayError as itself,
   * anything else as an internal error) rather than let a retry send again. `render` shapes the errors this store answers itself (that one, and a stale claim's: see
   * settleStale) in the caller's transport format.
   */
  async once(scope: string, key: string, payload: string, fn: (hooks: ClaimHooks) => Promise<StoredAnswer>, render: RenderError): Promise<StoredAnswer & { replayed: boolean }> {
    return this.run(scope, key, fingerprintOf(payload), fn, render);
  }

  private async run(scope: string, key: string, fingerprint: string, fn: (hooks: ClaimHooks) => Promise<StoredAnswer>, render: RenderError): Promise<StoredAnswer & { replayed: boolean }> {
    const claimedAt = await this.table.claim(scope, key, new Date(Date.now() - TTL_MS), fingerprint);
    if (!claimedAt) return this.waitForAnswer(scope, key, fingerprint, fn, render);
    let sent = false;
    let answer: StoredAnswer;
    try {
      answer = await fn({ journaled: () => void (sent = true), journalKey: journalKey(scope, key, claimedAt) });
    } catch (err) {
      if (!sent) {
        await this.table.release(scope, key);
        throw err;
      }
      // Kept as the error it is (a revert, a receipt wait that timed out), so a retry hears the same.
      answer = render(err instanceof GatewayError ? err : new GatewayError("internal", "the write was journaled and will be sent, but its answer failed", { cause: err }));
    }
    if (sent || (answer.status >= 200 && answer.status < 300)) await this.table.answer(scope, key, answer.status, answer.body);
    else await this.table.release(scope, key);
    return { ...answer, replayed: false };
  }

  /** Forgets answers past their 24 h (a key is otherwise only cleared when it is used again). */
  prune(now = new Date()): Promise<number> {
    return this.table.prune(new Date(now.getTime() - TTL_MS));
  }

  private async waitForAnswer(scope: string, key: string, fingerprint: string, fn: (hooks: ClaimHooks) => Promise<StoredAnswer>, render: RenderError): Promise<StoredAnswer & { replayed: boolean }> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const row = await this.table.read(scope, key);
      if (!row) return this.run(scope, key, fingerprint, fn, render); // the first attempt failed: this one runs
      // The same key with another payload is a client bug, not a retry: replaying the first answer would
      // tell it a write happened that it never asked for (IETF idempotency-key draft: 422).
      if (row.fingerprint !== null && row.fingerprint !== fingerprint) {
        return { ...render(new GatewayError("idempotency_mismatch", "this Idempotency-Key was used with a different request payload; use a new key for a new request")), replayed: true };
      }
      if (row.status !== null && row.body !== null) return { status: row.status, body: row.body, replayed: true };
      if (Date.now() - row.createdAt.getTime() > (this.options.staleAfterMs ?? DEFAULT_STALE_CLAIM_MS)) return this.settleStale(scope, key, fingerprint, row.createdAt, fn, render);
      if (Date.now() > deadline) return { status: 409, body: JSON.stringify({ success: false, error: "a request with this Idempotency-Key is still in progress", errorCode: "VALIDATION_ERROR" }), replayed: true };
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * A claim with no answer long after any request could still be running: its process stopped mid-request.
   * If it journaled the write, that write is sent (the journal is replayed) and the retry is told where to
   * follow it; if not, nothing was sent and the retry runs. Either way the claim is settled once, whichever
   * replica gets there first (the statements only act on the same unanswered claim).
   */
  private async settleStale(scope: string, key: string, fingerprint: string, createdAt: Date, fn: (hooks: ClaimHooks) => Promise<StoredAnswer>, render: RenderError): Promise<StoredAnswer & { replayed: boolean }> {
    const found = await this.options.findJournaled?.(journalKey(scope, key, createdAt));
    if (!found) {
      await this.table.release(scope, key, createdAt);
      return this.run(scope, key, fingerprint, fn, render);
    }
    const answer = render(
      new GatewayError("upstream_unavailable", `the first request with this Idempotency-Key was accepted, but its answer was lost when the gateway stopped; follow it with GET /zkt/transactions/${found.queueId}`, {
        details: { queueId: found.queueId, hash: found.hash },
      }),
    );
    await this.table.answer(scope, key, answer.status, answer.body, true);
    const row = await this.table.read(scope, key);
    return { status: row?.status ?? answer.status, body: row?.body ?? answer.body, replayed: true };
  }
}

/** What a claim keeps of its request's payload: a digest (the payload may be a 1 MB contract source). */
export function fingerprintOf(payload: string): string {
  return createHash("sha256").update(payload).digest("base64url");
}

function journalKey(scope: string, key: string, claimedAt: Date): string {
  return `${scope}\n${key}\n${claimedAt.getTime()}`;
}
