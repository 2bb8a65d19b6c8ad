// Events a client can cause at will (aborting its requests) are logged at debug one by one and at warn as one
// count per period: a line per event let any client flood the log.
import type { Logger } from "./logger.js";

export class PeriodicSummary {
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    /** The warn line's message; the count and period are its details. */
    private readonly message: string,
    private readonly periodMs = 60_000,
  ) {}

  /** One event: a debug line now, counted into the next warn summary. */
  note(what: string, details: Record<string, unknown>): void {
    this.log.debug(what, details);
    this.count++;
    this.timer ??= setTimeout(() => {
      this.log.warn(this.message, { count: this.count, periodSeconds: this.periodMs / 1000 });
      this.count = 0;
      this.timer = undefined;
    }, this.periodMs).unref();
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
