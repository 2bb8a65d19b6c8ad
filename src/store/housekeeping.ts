// Housekeeping, on start and hourly: expired Idempotency-Key answers, finished journal records and finished
// webhook deliveries past retention would otherwise stay for good (deliveries: a row per event per endpoint).
// Every replica may run it; concurrent deletes are harmless.
import type { Logger } from "../log/logger.js";
import type { IdempotencyStore } from "./idempotencyStore.js";
import type { SubmissionStore } from "./submissionStore.js";
import type { WebhookStore } from "./webhookStore.js";

export interface HousekeepingOptions {
  idempotency: IdempotencyStore;
  journal: SubmissionStore;
  webhooks: WebhookStore;
  /** Read at each run (a reload may change them): 0 days keeps the journal for good. */
  retention: () => { journalDays: number; deliveriesMs: number };
  log: Logger;
}

/** Runs now and every hour; returns the stop. */
export function startHousekeeping(o: HousekeepingOptions): () => void {
  const failed = (what: string) => (err: unknown) => o.log.warn(`${what} prune failed`, { error: String(err) });
  const pruned = (what: string, before?: Date) => (n: number) =>
    n > 0 && o.log.info(`${what} pruned`, { count: n, ...(before ? { before: before.toISOString() } : {}) });
  const run = (): void => {
    const { journalDays, deliveriesMs } = o.retention();
    void o.idempotency.prune().then(pruned("expired idempotency answers"), failed("idempotency"));
    if (journalDays > 0) {
      const before = new Date(Date.now() - journalDays * 86_400_000);
      void o.journal.prune(before).then(pruned("finished journal records", before), failed("journal"));
    }
    const deliveredBefore = new Date(Date.now() - deliveriesMs);
    void o.webhooks.pruneFinished(deliveredBefore).then(pruned("finished webhook deliveries", deliveredBefore), failed("webhook deliveries"));
  };
  run();
  const timer = setInterval(run, 3_600_000).unref();
  return () => clearInterval(timer);
}
