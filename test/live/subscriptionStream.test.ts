// The bounded queue between the head feed and a Connect stream (#32): a reader that stops reading is ended
// with resource_exhausted once more than maxQueued notifications wait, never unbounded memory; leaving the
// loop unsubscribes. The chain here is a stub that mines a block per poll (the feed's own logic is tested
// against anvil in test/transport/webSocket.test.ts).
import { describe, expect, it } from "vitest";
import { GatewayError, type JsonValue } from "../../src/errors.js";
import { HeadFeed } from "../../src/live/headFeed.js";
import { SubscriptionHub } from "../../src/live/subscriptions.js";
import { subscriptionStream } from "../../src/live/subscriptionStream.js";

function fastChain(): { call(method: string, params: JsonValue[]): Promise<JsonValue> } {
  let head = 100;
  const block = (n: number) => ({
    number: `0x${n.toString(16)}`,
    hash: `0x${n.toString(16).padStart(64, "0")}`,
    parentHash: `0x${(n - 1).toString(16).padStart(64, "0")}`,
  });
  return {
    async call(method, params) {
      if (method === "eth_blockNumber") return `0x${(head++).toString(16)}`;
      if (method === "eth_getBlockByNumber") return block(Number.parseInt(String(params[0]), 16));
      throw new Error(`unexpected ${method}`);
    },
  };
}

describe("subscriptionStream", () => {
  it("ends a reader that stopped reading with resource_exhausted, and unsubscribes", async () => {
    const hub = new SubscriptionHub(new HeadFeed(fastChain(), { pollMs: 1 }));
    const stream = subscriptionStream(hub, "newHeads", {}, new AbortController().signal, 3);
    const first = await stream.next();
    expect(JSON.parse(first.value as string)).toHaveProperty("number");
    expect(hub.size).toBe(1);
    await new Promise((r) => setTimeout(r, 100)); // dozens of blocks arrive unread
    let err: unknown;
    try {
      for (;;) await stream.next();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).kind).toBe("rate_limited");
    expect(hub.size).toBe(0);
  });

  it("the caller going away (abort) ends the stream and unsubscribes", async () => {
    const hub = new SubscriptionHub(new HeadFeed(fastChain(), { pollMs: 5 }));
    const abort = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const text of subscriptionStream(hub, "newHeads", {}, abort.signal, 1_000)) seen.push(text);
    })();
    await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    await reading;
    expect(seen.length).toBeGreaterThan(0);
    expect(hub.size).toBe(0);
  });
});
