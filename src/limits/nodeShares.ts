// Calls that make the node work (execute code, scan logs) are held to a share of the node per caller: a few
// at once, the next ones waiting in the caller's own line, and past that line refused. One address's heavy
// reads then queue behind each other instead of taking every node connection (and core) from everyone.
// bottleneck's Group is exactly that: a limiter per key, maxConcurrent, a bounded queue that drops overflow.
import Bottleneck from "bottleneck";
import { GatewayError } from "../errors.js";

export interface NodeSharesOptions {
  /** Heavy requests one caller may have at the node at once. */
  perCaller: number;
  /** Heavy requests one caller may have waiting for a slot; more are refused. */
  queuePerCaller: number;
  /** A request was refused because its caller's line was full. */
  refused?: () => void;
}

export class NodeShares {
  private readonly group: Bottleneck.Group;

  constructor(private readonly options: NodeSharesOptions) {
    this.group = new Bottleneck.Group({
      maxConcurrent: options.perCaller,
      highWater: options.queuePerCaller,
      strategy: Bottleneck.strategy.OVERFLOW,
      // An idle caller's limiter is dropped after a minute (the Group's own sweep).
      timeout: 60_000,
    });
  }

  /** Runs `work` in `caller`'s share; refuses (-32005, 429) when the caller's line is full. */
  run<T>(caller: string, method: string, work: () => Promise<T>): Promise<T> {
    return this.group
      .key(caller)
      .schedule(work)
      .catch((err: unknown) => {
        if (err instanceof Bottleneck.BottleneckError) {
          this.options.refused?.();
          throw new GatewayError(
            "rate_limited",
            `Too many concurrent calls that run on the node (${method}) from one caller: ${this.options.perCaller} at once and ` +
              `${this.options.queuePerCaller} waiting; wait for one to finish`,
            { retryAfterSeconds: 1 },
          );
        }
        throw err;
      });
  }

  stop(): void {
    void this.group.disconnect(false);
  }
}
