// Flow control: while the node answers, a lane holds at most two broadcast batches not yet sent; later
// submissions are answered once a batch is through, so accepted writes stay close to what the node takes.
// Since the pace is set by batches going through, the next batch goes out before the gateway signs more.
import diagnostics from "node:diagnostics_channel";
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
  /** Group commits and broadcast batches written to the node, in the order they happened. */
  const events: ("commit" | "broadcast")[] = [];
  const onSend = (message: unknown): void => {
    const body = (message as { request: { body?: unknown } }).request.body;
    if (Buffer.isBuffer(body) && body[0] === 0x5b && body.includes("eth_sendRawTransaction")) events.push("broadcast");
  };

  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    const pool = new UpstreamPool({ urls: [proxy.url], chainId: 20180427, timeoutMs: 5_000, probeIntervalMs: 60_000, log });
    const store = new MemorySubmissionStore();
    const reserve = store.reserveAndInsertLanes.bind(store);
    store.reserveAndInsertLanes = (...args) => {
      events.push("commit");
      return reserve(...args);
    };
    // undici announces each request as it writes it to the socket.
    diagnostics.subscribe("undici:client:sendHeaders", onSend);
    sequencer = new Sequencer({
      network: "testnet",
      chainId: 20180427,
      feeMode: "zero",
      pool,
      store,
      log,
      receiptPollMs: 100,
      devFunding: false,
    });
    await sequencer.start();
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, cacheTimeout: -1 });
  });
  afterAll(async () => {
    diagnostics.unsubscribe("undici:client:sendHeaders", onSend);
    sequencer?.stop();
    provider?.destroy();
    proxy?.close();
    await node?.stop();
  });

  it("when a batch is through, the lane's next batch is written to the node before the next group commit signs", async () => {
    const wallet = Wallet.createRandom();
    events.length = 0;
    const recs = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        sequencer.submit({ wallet, to: ZeroAddress, data: "0x" + Buffer.from(`order ${i}`).toString("hex"), kind: "message" }),
      ),
    );
    expect(recs).toHaveLength(300);
    // Two batches' room journaled (in commits of at most 128), batch 1 out; once it is through, batch 2 goes
    // out, then the last 100 are signed. (Before, that commit went first and batch 2 waited for its signing.)
    const first = events.indexOf("broadcast");
    expect(events.slice(first, first + 3)).toEqual(["broadcast", "broadcast", "commit"]);
  }, 30_000);

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
