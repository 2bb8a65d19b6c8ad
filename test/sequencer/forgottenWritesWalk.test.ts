// The journal walk after a node went back (#52), against a node that answers as a loaded one does: some batches
// fail. A 100-block rewind's lost writes lie at and above their signer's mined nonce, and are found from that
// nonce alone; the walk does not give up on a failed batch. (Before, every write was looked up by hash, a failed
// batch threw the walk away, and under load it never finished: writes stayed "completed" though not on chain.)
import { describe, expect, it } from "vitest";
import type { RpcCall, RpcOutcome } from "../../src/chain/upstreamReplies.js";
import { GatewayError, type JsonValue } from "../../src/errors.js";
import { createLogger } from "../../src/log/logger.js";
import { reopenForgottenWrites } from "../../src/sequencer/forgottenWrites.js";
import type { SubmissionRecord } from "../../src/store/submissionStore.js";
import { MemorySubmissionStore } from "../helpers/memorySubmissionStore.js";

const NETWORK = "testnet:0xabc";
const SIGNERS = ["0x" + "a1".repeat(20), "0x" + "b2".repeat(20), "0x" + "c3".repeat(20)];

/** Each signer wrote `written` completed writes, one a millisecond, interleaved; the node mined `mined[s]` of them. */
async function journal(written: number): Promise<MemorySubmissionStore> {
  const store = new MemorySubmissionStore();
  const t0 = Date.now() - 60_000;
  await store.reserveAndInsertLanes(
    NETWORK,
    SIGNERS.map((signer, s) => ({
      signer,
      chainPending: 0,
      count: written,
      build: async (nonces) =>
        nonces.map(
          (nonce): SubmissionRecord => ({
            queueId: `${s}-${nonce}`,
            network: NETWORK,
            signer,
            nonce,
            hash: `0x${s}${String(nonce).padStart(63, "0")}`,
            raw: "0x",
            kind: "message",
            status: "completed",
            createdAt: new Date(t0 + nonce * SIGNERS.length + s),
          }),
        ),
    })),
  );
  return store;
}

/** A node holding nonces below `mined` per signer, failing every `failEvery`-th batch whole. */
function node(mined: Map<string, number>, failEvery: number) {
  let batches = 0;
  const asked = new Map<string, number>();
  const minedHash = (hash: string) => {
    const s = Number(hash[2]);
    return Number.parseInt(hash.slice(3), 10) < mined.get(SIGNERS[s]!)!;
  };
  return {
    asked,
    callMany: async (calls: RpcCall[]): Promise<RpcOutcome[]> => {
      if (++batches % failEvery === 0) throw new GatewayError("upstream_unavailable", "the node did not answer in time");
      return calls.map((c): RpcOutcome => {
        asked.set(c.method, (asked.get(c.method) ?? 0) + 1);
        const p = c.params as JsonValue[];
        if (c.method === "eth_getTransactionCount") return { ok: true, result: "0x" + mined.get(p[0] as string)!.toString(16) };
        return { ok: true, result: minedHash(p[0] as string) ? { blockNumber: "0x1" } : null };
      });
    },
  };
}

describe("the journal walk after a node went back", () => {
  it("reopens exactly the writes at and above each signer's mined nonce, through failing batches, looking few up", async () => {
    const store = await journal(4_000);
    const mined = new Map([
      [SIGNERS[0]!, 1_000],
      [SIGNERS[1]!, 3_990],
      [SIGNERS[2]!, 4_000],
    ]);
    const pool = node(mined, 3);
    const reopened = await reopenForgottenWrites({ network: NETWORK, store, pool, log: createLogger("error") });
    expect(reopened).toBe(3_000 + 10);
    const pending = await store.listUnfinished(NETWORK, 100_000);
    for (const [signer, n] of mined)
      expect(pending.filter((r) => r.signer === signer).map((r) => r.nonce)).toEqual(Array.from({ length: 4_000 - n }, (_, i) => n + i));
    // Below its mined nonce, only a signer's newest writes are looked up by hash, not its whole history.
    expect(pool.asked.get("eth_getTransactionByHash") ?? 0).toBeLessThan(1_000);
  });

  it("finds a write the node holds the nonce of but not the block (anvil's state ahead of its blocks)", async () => {
    const store = await journal(300);
    const mined = new Map(SIGNERS.map((s) => [s, 300]));
    const pool = node(mined, 1_000);
    // The node's account says nonce 299 is spent, yet the write is in no block.
    const lostHash = `0x1${String(299).padStart(63, "0")}`;
    const callMany = pool.callMany;
    pool.callMany = async (calls) =>
      (await callMany(calls)).map((o, i) =>
        calls[i]!.method === "eth_getTransactionByHash" && (calls[i]!.params as string[])[0] === lostHash ? { ok: true, result: null } : o,
      );
    expect(await reopenForgottenWrites({ network: NETWORK, store, pool, log: createLogger("error") })).toBe(1);
    expect((await store.get("1-299"))?.status).toBe("pending");
  });

  it("keeps completed a write the node answers null by hash for, when the block that spent its nonce holds it (#63)", async () => {
    const store = await journal(300);
    const mined = new Map(SIGNERS.map((s) => [s, 300]));
    const pool = node(mined, 1_000);
    // An index being rebuilt: every by-hash lookup answers null, though each write is in its block.
    const callMany = pool.callMany;
    pool.callMany = async (calls) => (await callMany(calls)).map((o, i) => (calls[i]!.method === "eth_getTransactionByHash" ? { ok: true, result: null } : o));
    const asked: number[] = [];
    const spenders = {
      of: async (w: { nonce: number; hash: string }) => {
        asked.push(w.nonce);
        return { verdict: "mined" as const, hash: w.hash, block: w.nonce };
      },
    };
    // Without the blocks' word, each signer's newest writes were reopened (resent, found mined, reopened again
    // at the next pass); with it, none is.
    expect(await reopenForgottenWrites({ network: NETWORK, store, pool, log: createLogger("error") })).toBeGreaterThan(0);
    const again = await journal(300);
    expect(await reopenForgottenWrites({ network: NETWORK, store: again, pool, log: createLogger("error"), spenders })).toBe(0);
    expect(asked.length).toBeGreaterThan(0);
  });
});
