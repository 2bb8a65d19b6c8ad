// SubscriptionHub hands each block's result, serialised once, to every subscriber as the same object, with the
// text's UTF-8 length counted once (the WebSocket frame header is sized by it): for every kind, for results held
// until the subscribe answer went out, and for text that is not ASCII (where characters and bytes differ).
import { describe, expect, it } from "vitest";
import type { FeedBlock, FeedListener } from "../../src/live/headFeed.js";
import { type FeedSource, type SharedResult, SubscriptionHub } from "../../src/live/subscriptions.js";

function manualFeed(): FeedSource & { listeners: Set<FeedListener> } {
  const listeners = new Set<FeedListener>();
  return { listeners, add: (l) => listeners.add(l), remove: (l) => listeners.delete(l) };
}

const block = (n: number, extra: string): FeedBlock => {
  const log = { address: "0x00000000000000000000000000000000000000aa", topics: ["0x01"], json: { data: extra, blockNumber: `0x${n.toString(16)}` } };
  return { number: n, hash: `0x${n}`, parentHash: `0x${n - 1}`, headerJson: JSON.stringify({ number: `0x${n.toString(16)}`, extraData: extra }), logs: [log] };
};

describe("SubscriptionHub", () => {
  it("gives every subscriber the block's one result, with its UTF-8 length, ASCII or not, held or not", () => {
    const feed = manualFeed();
    const hub = new SubscriptionHub(feed);
    const seen = new Map<string, SharedResult[]>();
    const subscribe = (kind: "newHeads" | "logs" | "newPendingTransactions"): string => {
      const got: SharedResult[] = [];
      const id = hub.subscribe(kind, {}, (r) => void got.push(r));
      seen.set(id, got);
      return id;
    };
    const [heads, heads2, logs, pending] = [subscribe("newHeads"), subscribe("newHeads"), subscribe("logs"), subscribe("newPendingTransactions")];
    const deliver = (b: FeedBlock): void => {
      for (const l of feed.listeners) l.block?.(b);
    };
    deliver(block(1, "plain")); // held: no release yet
    for (const id of seen.keys()) hub.release(id);
    deliver(block(2, "héllo ✓ 😀"));
    for (const l of feed.listeners) l.removed?.(block(2, "héllo ✓ 😀"));
    for (const l of feed.listeners) l.pending?.(["0xabc"]);
    const [h, h2, l, p] = [heads, heads2, logs, pending].map((id) => seen.get(id)!);
    expect([h!.length, h2!.length, l!.length, p!.length]).toEqual([2, 2, 3, 1]); // blocks 1 and 2; their logs and the removed one
    // One object per block for all its subscribers: serialised and counted once.
    expect(h![0]).toBe(h2![0]);
    expect(h![1]).toBe(h2![1]);
    for (const r of [...h!, ...l!, ...p!]) expect(r.bytes).toBe(Buffer.byteLength(r.text));
    expect(h![1]!.bytes).not.toBe(h![1]!.text.length);
    expect(JSON.parse(l![2]!.text)).toMatchObject({ data: "héllo ✓ 😀", removed: true });
    expect(JSON.parse(p![0]!.text)).toBe("0xabc");
  });
});
