// The order a head feed tells its listeners (#32): a relay to a fan-out shard is told before the listeners
// that write sockets in this process, whenever it was added, so that the shard writes its sockets while this
// process writes its own (told after, the shard started only once this process had written thousands).
import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/errors.js";
import { HeadFeed } from "../../src/live/headFeed.js";

/** A chain that mines a block per poll. */
function fastChain(): { call(method: string, params: JsonValue[]): Promise<JsonValue> } {
  let head = 100;
  return {
    async call(method, params) {
      if (method === "eth_blockNumber") return `0x${(head++).toString(16)}`;
      const n = Number.parseInt(String(params[0]), 16);
      return { number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, "0")}`, parentHash: `0x${(n - 1).toString(16).padStart(64, "0")}` };
    },
  };
}

describe("HeadFeed listener order", () => {
  it("tells relays first, though added after the local listeners", async () => {
    const feed = new HeadFeed(fastChain(), { pollMs: 1 });
    const order: string[] = [];
    feed.add({ block: (b) => void order.push(`local ${b.number}`) });
    feed.add({ block: (b) => void order.push(`local2 ${b.number}`) });
    feed.add({ relay: true, block: (b) => void order.push(`relay ${b.number}`) });
    while (order.length < 6) await new Promise((r) => setTimeout(r, 5));
    feed.stop();
    const first = Number(order[0]!.split(" ")[1]);
    expect(order.slice(0, 6)).toEqual([
      `relay ${first}`,
      `local ${first}`,
      `local2 ${first}`,
      `relay ${first + 1}`,
      `local ${first + 1}`,
      `local2 ${first + 1}`,
    ]);
  });
});
