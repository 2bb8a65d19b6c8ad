// A receipt a client has seen is not taken back by the next read (read-your-writes after "mined"): two proxies
// of one anvil, the faster (asked first) hiding every transaction by hash, as a node rebuilding its index does.
// Once the gateway has answered a receipt, a null from the node asked is asked of the others at that height.
// It once asked only the first node at that height, the same one that had just answered null, so the client
// got null (seen in upstreamRouting's "receipt readable at once", 1 run in 2 of a full suite).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devSender } from "../helpers/emitter.js";
import type { FaultyUpstream } from "../helpers/faultyUpstream.js";
import { rpc } from "../helpers/gateway.js";
import { type TwoProxies, startTwoProxies } from "../helpers/twoProxies.js";
import { until } from "../helpers/until.js";

describe("a receipt once answered", () => {
  let proxies: TwoProxies;
  let hider: FaultyUpstream;
  let node: string;
  let url: string;

  // The honest one answers later, so the hider is asked first.
  beforeAll(async () => {
    proxies = await startTwoProxies();
    ({ node, url, first: hider } = proxies);
  });
  afterAll(() => proxies?.close());

  it("is answered again when the node asked hides it", { timeout: 60_000 }, async () => {
    // Sent to the node itself: the gateway knows it only from the receipt it answers.
    const hash = await devSender(node)({ to: "0x000000000000000000000000000000000000dEaD", data: "0x" });
    let mined: { blockNumber: string } | null = null;
    await until(async () => (mined = await rpc<{ blockNumber: string } | null>(url, "eth_getTransactionReceipt", [hash])) !== null);
    const block = Number(mined!.blockNumber);
    await until(async () => Number(await rpc<string>(node, "eth_blockNumber")) > block + 2);
    await new Promise((r) => setTimeout(r, 500));
    hider.hideHashes(1);
    const reads: unknown[] = [];
    for (let i = 0; i < 10; i++) reads.push(await rpc(url, "eth_getTransactionReceipt", [hash]));
    expect(hider.hidden, "the hider was asked and hid it").toBeGreaterThan(0);
    expect(reads.filter((r) => r === null).length, "reads answered null").toBe(0);
  });
});
