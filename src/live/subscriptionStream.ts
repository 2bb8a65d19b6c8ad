// A hub subscription as an async iterable, for Connect server streams: each item is a result's JSON text.
// The queue between the feed and a slow reader is bounded: past it the stream ends with resource_exhausted
// (never unbounded memory). Leaving the loop, or the caller going away (signal), unsubscribes.
import { GatewayError } from "../errors.js";
import type { LogFilter } from "./logFilter.js";
import type { SubscriptionHub, SubscriptionKind } from "./subscriptions.js";

export async function* subscriptionStream(
  hub: SubscriptionHub,
  kind: SubscriptionKind,
  filter: LogFilter,
  signal: AbortSignal,
  maxQueued: number,
): AsyncGenerator<string> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let overflow = false;
  const id = hub.subscribe(kind, filter, (result) => {
    if (queue.length >= maxQueued) overflow = true;
    else queue.push(result.text);
    wake?.();
  });
  hub.release(id);
  const onAbort = (): void => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    for (;;) {
      if (overflow) throw new GatewayError("rate_limited", `slow consumer: more than ${maxQueued} notifications unread`);
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (signal.aborted) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    hub.unsubscribe(id);
  }
}
