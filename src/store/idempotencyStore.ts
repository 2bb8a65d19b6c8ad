// Idempotency-Key: a retried write returns the first one's answer for 24 h, across replicas (the answer is
// kept in the store). Concurrent duplicates wait for the first. A first attempt that failed before its
// transaction was journaled leaves no trace (a retry runs); once journaled, its answer is kept, whatever it
// is (a receipt wait that timed out, a revert): a retry that ran again would send a second transaction.
import type { SqlClient } from "./sqlClient.js";

export interface StoredAnswer {
  status: number;
  body: string;
}

const TTL_MS = 24 * 3_600_000;
/** Longest key accepted (REST header and Connect field alike). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

export class IdempotencyStore {
  constructor(private readonly db: SqlClient) {}

  /**
   * Runs fn once per (scope, key). fn calls `journaled` once its transaction is journaled: from then on its
   * answer is kept whatever its status; before, only a 2xx answer is (a refusal can be retried). fn should
   * answer its own errors; one thrown after `journaled` is kept as a 500 rather than let a retry send again.
   */
  async once(scope: string, key: string, fn: (journaled: () => void) => Promise<StoredAnswer>): Promise<StoredAnswer & { replayed: boolean }> {
    await this.db.query("delete from idempotency where scope = $1 and key = $2 and created_at < $3", [scope, key, new Date(Date.now() - TTL_MS)]);
    const claimed = await this.db.query("insert into idempotency (scope, key) values ($1, $2) on conflict do nothing returning key", [scope, key]);
    if (claimed.length === 0) return { ...(await this.waitForAnswer(scope, key, fn)), replayed: true };
    let sent = false;
    let answer: StoredAnswer;
    try {
      answer = await fn(() => void (sent = true));
    } catch (err) {
      if (!sent) {
        await this.db.query("delete from idempotency where scope = $1 and key = $2", [scope, key]);
        throw err;
      }
      answer = { status: 500, body: JSON.stringify({ success: false, error: "the write was journaled and will be sent, but its answer failed", errorCode: "INTERNAL_ERROR" }) };
    }
    if (sent || (answer.status >= 200 && answer.status < 300)) await this.db.query("update idempotency set status = $3, body = $4 where scope = $1 and key = $2", [scope, key, answer.status, answer.body]);
    else await this.db.query("delete from idempotency where scope = $1 and key = $2", [scope, key]);
    return { ...answer, replayed: false };
  }

  /** Forgets answers past their 24 h (a key is otherwise only cleared when it is used again). */
  async prune(now = new Date()): Promise<number> {
    const rows = await this.db.query("delete from idempotency where created_at < $1 returning key", [new Date(now.getTime() - TTL_MS)]);
    return rows.length;
  }

  private async waitForAnswer(scope: string, key: string, fn: (journaled: () => void) => Promise<StoredAnswer>): Promise<StoredAnswer> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [row] = await this.db.query<{ status: number | null; body: string | null }>("select status, body from idempotency where scope = $1 and key = $2", [scope, key]);
      if (!row) return (await this.once(scope, key, fn)) as StoredAnswer; // the first attempt failed: this one runs
      if (row.status !== null && row.body !== null) return { status: row.status, body: row.body };
      if (Date.now() > deadline) return { status: 409, body: JSON.stringify({ success: false, error: "a request with this Idempotency-Key is still in progress", errorCode: "VALIDATION_ERROR" }) };
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
