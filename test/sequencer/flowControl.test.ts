// Flow control: while the node answers, a lane holds at most two broadcast batches not yet sent; later
// submissions are answered once a batch is through, so accepted writes stay close to what the node takes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Wallet, ZeroAddress } from "ethers";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import { UpstreamPool } from "../../src/chain/upstreamPool.js";
import { Sequencer } from "../../src/sequencer/sequencer.js";
import { MemorySubmissionStore } from "../helpers/memorySubmissionStore.js";
import { createLogger } from "../../src/log/logger.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";

describe("sequencer flow control", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let sequencer: Sequencer;
  let provider: JsonRpcProvider;
  const log = createLogger("silent");

  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    const pool = new UpstreamPool({ urls: [proxy.url], chainId: 20180427, timeoutMs: 5_000, probeIntervalMs: 60_000, log });
    sequencer = new Sequencer({
      network: "testnet",
      chainId: 20180427,
      feeMode: "zero",
      pool,
      store: new MemorySubmissionStore(),
      log,
      receiptPollMs: 100,
      devFunding: false,
    });
    await sequencer.start();
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, cacheTimeout: -1 });
  });
  afterAll(async () => {
    sequencer?.stop();
    provider?.destroy();
    proxy?.close();
    await node?.stop();
  });

  it("a slow node holds a lane's submissions beyond two batches until a batch is through; all then mine in order", async () => {
    const wallet = Wallet.createRandom(); // zero-fee network: no balance needed
    proxy.slow(600, /eth_sendRawTransaction/);
    const started = performance.now();
    const answeredAt: number[] = [];
    const writes = Array.from({ length: 450 }, (_, i) =>
      sequencer.submit({ wallet, to: ZeroAddress, data: "0x" + Buffer.from(`held ${i}`).toString("hex"), kind: "message" }).then((r) => {
        answeredAt.push(performance.now() - started);
        return r;
      }),
    );
    await new Promise((r) => setTimeout(r, 400));
    // Two batches' worth journaled and answered; the rest wait while the first batch is with the node.
    expect(answeredAt.length).toBe(200);
    const recs = await Promise.all(writes);
    expect(answeredAt.filter((t) => t >= 600).length).toBe(250);
    expect(recs.map((r) => r.nonce).sort((a, b) => a - b)).toEqual(Array.from({ length: 450 }, (_, n) => n));
    for (let i = 0; i < 100 && (await provider.getTransactionCount(wallet.address, "latest")) < 450; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await provider.getTransactionCount(wallet.address, "latest")).toBe(450);
  }, 30_000);
});
