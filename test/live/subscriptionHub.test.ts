// SubscriptionHub hands each notification to its sink with the text's UTF-8 length, counted once per block for
// every subscriber (the WebSocket frame header is sized by it): the length must be the text's own, in both
// formats, for every kind, for notifications held until the subscribe answer went out, and for text that is
// not ASCII (where characters and bytes differ).
import { describe, expect, it } from "vitest";
import type { FeedBlock, FeedListener } from "../../src/live/headFeed.js";
import { type FeedSource, SubscriptionHub } from "../../src/live/subscriptions.js";

function manualFeed(): FeedSource & { listeners: Set<FeedListener> } {
  const listeners = new Set<FeedListener>();
  return { listeners, add: (l) => listeners.add(l), remove: (l) => listeners.delete(l) };
}

const block = (n: number, extra: string): FeedBlock => {
  const log = { address: "0x00000000000000000000000000000000000000aa", topics: ["0x01"], json: { data: extra, blockNumber: `0x${n.toString(16)}` } };
  return { number: n, hash: `0x${n}`, parentHash: `0x${n - 1}`, headerJson: JSON.stringify({ number: `0x${n.toString(16)}`, extraData: extra }), logs: [log] };
};

describe("SubscriptionHub", () => {
  it("gives every sink the UTF-8 length of the text it gets, ASCII or not, held or not", () => {
    const feed = manualFeed();
    const hub = new SubscriptionHub(feed);
    const seen: Array<{ text: string; bytes: number }> = [];
    const sink = (text: string, bytes: number): void => void seen.push({ text, bytes });
    const heads = hub.subscribe("newHeads", {}, sink);
    const logs = hub.subscribe("logs", {}, sink);
    const pending = hub.subscribe("newPendingTransactions", {}, sink, "result");
    const results = hub.subscribe("newHeads", {}, sink, "result");
    const deliver = (b: FeedBlock): void => {
      for (const l of feed.listeners) l.block?.(b);
    };
    deliver(block(1, "plain")); // held: no release yet
    for (const id of [heads, logs, pending, results]) hub.release(id);
    deliver(block(2, "héllo ✓ 😀"));
    for (const l of feed.listeners) l.removed?.(block(2, "héllo ✓ 😀"));
    for (const l of feed.listeners) l.pending?.(["0xabc"]);
    expect(seen.length).toBe(3 + 3 + 1 + 1); // blocks 1 and 2 (heads, logs, results each), the removed log, the hash
    for (const { text, bytes } of seen) expect(bytes).toBe(Buffer.byteLength(text));
    expect(seen.some(({ text, bytes }) => bytes !== text.length)).toBe(true);
    const notification = JSON.parse(seen.find((s) => s.text.includes("✓") && s.text.includes("eth_subscription"))!.text) as {
      params: { subscription: string };
    };
    expect([heads, logs]).toContain(notification.params.subscription);
  });
});
