// The resend rule on its own (zero-fee networks): a write the node took is sent again only once it has been
// unmined for stuckAfterMs, then at most once per stuckAfterMs, and a pass reports it per lane.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SubmissionRecord } from "../../src/store/submissionStore.js";
import { type LaneTally, StuckWrites, type StuckWritesOptions } from "../../src/sequencer/stuckWrites.js";

const STUCK_AFTER = 30_000;

function writeOf(signer: string, nonce: number, createdAt: number): SubmissionRecord {
  return {
    queueId: `q-${signer}-${nonce}`,
    network: "testnet",
    signer,
    nonce,
    hash: "0x",
    raw: "0x",
    kind: "message",
    status: "processing",
    createdAt: new Date(createdAt),
  };
}

function stuckWrites(): { writes: StuckWrites; warned: { msg: string; fields: Record<string, unknown> }[] } {
  const warned: { msg: string; fields: Record<string, unknown> }[] = [];
  const log = { warn: (msg: string, fields: Record<string, unknown>) => warned.push({ msg, fields }) };
  // The resend rule touches none of the node, journal or wallets.
  const options = { stuckAfterMs: STUCK_AFTER, maxFeeBumps: 3, feeMode: "zero", log } as unknown as StuckWritesOptions;
  return { writes: new StuckWrites(options), warned };
}

describe("StuckWrites.dueForResend", () => {
  afterEach(() => vi.useRealTimers());

  it("waits stuckAfterMs from the write, then resends at most once per stuckAfterMs, and forgets finished writes", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { writes } = stuckWrites();
    const rec = writeOf("0xa", 5, Date.now());
    const pass = (): boolean => writes.dueForResend(rec, new Map());
    expect(pass()).toBe(false); // just sent
    vi.advanceTimersByTime(STUCK_AFTER);
    expect(pass()).toBe(true);
    vi.advanceTimersByTime(STUCK_AFTER - 1);
    expect(pass()).toBe(false); // resent less than stuckAfterMs ago
    vi.advanceTimersByTime(1);
    expect(pass()).toBe(true);
    // Finished (no longer in the journal's unfinished list): forgotten, so only its age counts again.
    writes.keepOnly(new Set());
    expect(pass()).toBe(true);
  });

  it("tallies a pass per lane (count, lowest nonce) and logs one line per lane", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { writes, warned } = stuckWrites();
    const old = Date.now() - STUCK_AFTER;
    const stuck: LaneTally = new Map();
    for (const rec of [writeOf("0xa", 7, old), writeOf("0xa", 6, old), writeOf("0xb", 1, old), writeOf("0xb", 2, Date.now())]) writes.dueForResend(rec, stuck);
    expect(Object.fromEntries(stuck)).toEqual({ "0xa": { count: 2, first: 6 }, "0xb": { count: 1, first: 1 } });
    writes.endPass(stuck);
    expect(warned.map((w) => w.fields)).toEqual([
      { signer: "0xa", count: 2, firstNonce: 6 },
      { signer: "0xb", count: 1, firstNonce: 1 },
    ]);
  });
});
