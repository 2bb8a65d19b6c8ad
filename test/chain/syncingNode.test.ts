// A node that says it is syncing (eth_syncing not false) gets no reads while another node will do, even at
// the same head and with the better score; once it reports synced it is used again.
import { afterAll, describe, expect, it } from "vitest";
import { twoNodePool } from "../helpers/fakeNode.js";

describe("a syncing node", () => {
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const c of closers) c();
  });

  it("is skipped for reads while it syncs, and used again after", async () => {
    // The syncing node answers probes fastest, so by score alone it would be asked first.
    // The syncing node answers probes fastest, so by score alone it would be asked first.
    const SYNCING = { startingBlock: "0x0", currentBlock: "0x10", highestBlock: "0x400" };
    const { pool, first: syncing, second: synced, close } = await twoNodePool({ syncing: SYNCING }, {}, { timeoutMs: 5_000, routing: { hedge: false } });
    closers.push(close);
    for (let i = 0; i < 5; i++) await pool.call("eth_getBalance", ["0x" + "11".repeat(20), "latest"]);
    expect([syncing.reads, synced.reads]).toEqual([0, 5]);

    // It finishes; the other starts syncing (so where reads go does not hang on answer times).
    syncing.syncing = false;
    synced.syncing = SYNCING;
    await (pool as unknown as { probeAll(): Promise<void> }).probeAll();
    for (let i = 0; i < 5; i++) await pool.call("eth_getBalance", ["0x" + "11".repeat(20), "latest"]);
    expect([syncing.reads, synced.reads]).toEqual([5, 5]);
  });
});
