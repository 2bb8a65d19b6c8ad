// The one backoff of the house's hand-made waits (reconnects, restarts, breaker probes, bans): a delay that
// starts at `firstMs`, doubles after each failure up to `maxMs`, and starts over after a success. Retries of a
// single call use p-retry instead; this is for the waits between attempts of something long-lived.
export interface DoublingDelaySettings {
  firstMs: number;
  maxMs: number;
}

export class DoublingDelay {
  private current = 0;

  constructor(private readonly settings: DoublingDelaySettings) {}

  /** The delay before the next attempt, after a failure: the first, or twice the last (at most maxMs). */
  next(): number {
    this.current = this.current === 0 ? this.settings.firstMs : Math.min(this.settings.maxMs, this.current * 2);
    return this.current;
  }

  /** After a success: the next failure waits the first delay again. */
  reset(): void {
    this.current = 0;
  }

  /** The last delay given (0 after a reset). */
  get ms(): number {
    return this.current;
  }
}
