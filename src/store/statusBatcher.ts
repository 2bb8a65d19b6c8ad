// Plain status changes (broadcast → processing, mined → completed) are the bulk of journal writes: both SQL
// journals gather those issued within a few milliseconds and write them with one statement per status.
import type { SubmissionStatus } from "./submissionStore.js";

/** How long plain status changes gather before one statement writes them all (a per-tick flush wrote one row per statement; bench). */
const STATUS_FLUSH_MS = 25;
/**
 * "processing" (the node has it) waits longer: most transactions are mined within a block or two, and a
 * "completed" or "error" arriving first makes the mark moot, so it is dropped instead of written (each status
 * change rewrites the row and its indexes; bench). Recovery does not depend on it (start-up replays pending
 * and processing alike; the periodic pass only takes records older than this).
 */
const PROCESSING_FLUSH_MS = 750;

/** Writes one group: `ids` take `status` (and `at` as processed_at, when given). "processing" must only follow "pending". */
export type StatusFlush = (status: SubmissionStatus, ids: string[], at: Date | null) => Promise<void>;

export class StatusBatcher {
  private readonly groups = new Map<string, { ids: Set<string>; done: Promise<void>; now: () => void; status: SubmissionStatus; at: Date | undefined }>();
  /** queueId → the unflushed "processing" group holding it, so a later status can take it out. */
  private readonly processingMarks = new Map<string, Set<string>>();

  constructor(private readonly flush: StatusFlush) {}

  /** Queues a plain status change; resolves once it is written (or dropped as moot). `urgent` writes its group now. */
  mark(queueId: string, status: SubmissionStatus, processedAt: Date | undefined, urgent = false): Promise<void> {
    if (status !== "processing") this.forget(queueId);
    const key = `${status}|${processedAt ? "at" : ""}`;
    let group = this.groups.get(key);
    if (!group) {
      const ids = new Set<string>();
      const at = processedAt ?? null;
      let now = (): void => undefined;
      const done = new Promise<void>((resolve, reject) => {
        const write = (): void => {
          clearTimeout(timer);
          if (this.groups.get(key)?.ids !== ids) return; // written already
          this.groups.delete(key);
          if (status === "processing") for (const id of ids) this.processingMarks.delete(id);
          if (ids.size === 0) return resolve();
          this.flush(status, [...ids], at).then(resolve, reject);
        };
        const timer = setTimeout(write, status === "processing" ? PROCESSING_FLUSH_MS : STATUS_FLUSH_MS);
        now = write;
      });
      group = { ids, done, now, status, at: processedAt };
      this.groups.set(key, group);
    }
    group.ids.add(queueId);
    if (status === "processing") this.processingMarks.set(queueId, group.ids);
    if (urgent) group.now();
    return group.done;
  }

  /** Writes every waiting group now (a graceful close must not leave known outcomes unwritten). */
  async flushAll(): Promise<void> {
    const groups = [...this.groups.values()];
    for (const g of groups) g.now();
    await Promise.allSettled(groups.map((g) => g.done));
  }

  /**
   * `record` as this process already knows it: with the status queued for it and not yet written, if any (a
   * "completed" or "error" before a "processing"). A status read must not go back behind what was answered.
   */
  overlay<R extends { queueId: string; status: SubmissionStatus; processedAt?: Date | undefined }>(record: R): R {
    let queued: { status: SubmissionStatus; at: Date | undefined } | undefined;
    for (const g of this.groups.values()) {
      // Any later status beats "processing"; of two others, the group made last.
      if (g.ids.has(record.queueId) && (!queued || queued.status === "processing" || g.status !== "processing")) queued = g;
    }
    if (!queued || (queued.status === "processing" && record.status !== "pending")) return record;
    return { ...record, status: queued.status, ...(queued.at ? { processedAt: queued.at } : {}) };
  }

  /** A later status (written directly) makes an unflushed "processing" mark moot. */
  forget(queueId: string): void {
    this.processingMarks.get(queueId)?.delete(queueId);
  }
}
