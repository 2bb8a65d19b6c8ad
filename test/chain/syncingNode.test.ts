// A node that says it is syncing (eth_syncing not false) gets no reads while another node will do, even at
// the same head and with the better score; once it reports synced it is used again.
import { afterAll, describe, expect, it } from "vitest";
import { UpstreamPool } from "../../src/chain/upstreamPool.js";
import { createLogger } from "../../src/log/logger.js";
import { startFakeNode } from "../helpers/fakeNode.js";

const CHAIN_ID = 20180427;

describe("a syncing node", () => {
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const c of closers) c();
  });

  it("is skipped for reads while it syncs, and used again after", async () => {
    // The syncing node answers probes fastest, so by score alone it would be asked first.
    const syncing = await startFakeNode({ chainId: CHAIN_ID });
    const synced = await startFakeNode({ chainId: CHAIN_ID, probeDelayMs: 150 });
    syncing.syncing = { startingBlock: "0x0", currentBlock: "0x10", highestBlock: "0x400" };
    closers.push(syncing.close, synced.close);
    const pool = new UpstreamPool({
      urls: [syncing.url, synced.url],
      chainId: CHAIN_ID,
      timeoutMs: 5_000,
      probeIntervalMs: 60_000,
      log: createLogger("error"),
      routing: { hedge: false },
    });
    closers.push(() => pool.stop());
    await pool.start();
    for (let i = 0; i < 5; i++) await pool.call("eth_getBalance", ["0x" + "11".repeat(20), "latest"]);
    expect([syncing.reads, synced.reads]).toEqual([0, 5]);

    // It finishes; the other starts syncing (so where reads go does not hang on answer times).
    syncing.syncing = false;
    synced.syncing = { startingBlock: "0x0", currentBlock: "0x10", highestBlock: "0x400" };
    await (pool as unknown as { probeAll(): Promise<void> }).probeAll();
    for (let i = 0; i < 5; i++) await pool.call("eth_getBalance", ["0x" + "11".repeat(20), "latest"]);
    expect([syncing.reads, synced.reads]).toEqual([5, 5]);
  });
});
