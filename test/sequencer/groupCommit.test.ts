// The sequencer's group commit across lanes: writes from several signers in one turn share one store
// transaction; should it fail, each lane is retried alone, so one lane's trouble never fails another's writes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Wallet } from "ethers";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import { UpstreamPool } from "../../src/chain/upstreamPool.js";
import { Sequencer } from "../../src/sequencer/sequencer.js";
import type { LaneReservation, SubmissionRecord } from "../../src/store/submissionStore.js";
import { MemorySubmissionStore } from "../helpers/memorySubmissionStore.js";
import { createLogger } from "../../src/log/logger.js";
import { GatewayError } from "../../src/errors.js";

/**
 * Records how many lanes each commit carried; refuses multi-lane commits while `refuseShared` is set; while
 * `commitThenLose` is set, commits and then answers as a store whose COMMIT went unanswered (sqlClient.ts).
 */
class ObservedStore extends MemorySubmissionStore {
  commits: number[] = [];
  refuseShared = false;
  commitThenLose = false;
  override async reserveAndInsertLanes(network: string, lanes: LaneReservation[]): Promise<SubmissionRecord[][]> {
    this.commits.push(lanes.length);
    if (this.refuseShared && lanes.length > 1) throw new Error("serialization failure");
    const out = await super.reserveAndInsertLanes(network, lanes);
    if (this.commitThenLose) throw new GatewayError("upstream_unavailable", "the journal did not confirm in time", { details: { recorded: "unknown" } });
    return out;
  }
}

describe("sequencer: one group commit across lanes", () => {
  let node: EmbeddedNode;
  let pool: UpstreamPool;
  let sequencer: Sequencer;
  let provider: JsonRpcProvider;
  const store = new ObservedStore();
  const log = createLogger("silent");
  const wallets = Array.from({ length: 4 }, () => Wallet.createRandom()); // zero-fee network: no balance needed

  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    pool = new UpstreamPool({ urls: [node.url], chainId: 20180427, timeoutMs: 5_000, probeIntervalMs: 60_000, log });
    sequencer = new Sequencer({ network: "testnet", chainId: 20180427, feeMode: "zero", pool, store, log, receiptPollMs: 100, devFunding: false });
    await sequencer.start();
    provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, cacheTimeout: -1 });
  });
  afterAll(async () => {
    sequencer?.stop();
    provider?.destroy();
    pool?.stop();
    await node?.stop();
  });

  const submissions = (tag: string) =>
    wallets.flatMap((wallet) =>
      Array.from({ length: 5 }, (_, i) =>
        sequencer.submit({
          wallet,
          to: "0x0000000000000000000000000000000000000000",
          data: "0x" + Buffer.from(`${tag} ${i}`).toString("hex"),
          kind: "message",
        }),
      ),
    );
  const burst = (tag: string) => Promise.all(submissions(tag));

  const checkMined = async (records: SubmissionRecord[], from: Map<string, number>) => {
    await Promise.all(records.map((r) => sequencer.waitForReceipt(r.hash, 20_000)));
    for (const w of wallets) {
      const nonces = records
        .filter((r) => r.signer === w.address)
        .map((r) => r.nonce)
        .sort((a, b) => a - b);
      expect(nonces).toEqual(Array.from({ length: 5 }, (_, i) => from.get(w.address)! + i));
      expect(await provider.getTransactionCount(w.address, "latest")).toBe(from.get(w.address)! + 5);
    }
  };

  it("a burst from four signers is journaled in shared commits, and all of it mines in nonce order", async () => {
    const records = await burst("shared");
    expect(Math.max(...store.commits)).toBeGreaterThan(1);
    await checkMined(records, new Map(wallets.map((w) => [w.address, 0])));
  });

  it("a shared commit that fails is retried lane by lane: every write still lands once", async () => {
    store.refuseShared = true;
    store.commits = [];
    const records = await burst("retried");
    expect(store.commits.some((n) => n > 1)).toBe(true); // the shared attempt was made, and refused
    await checkMined(records, new Map(wallets.map((w) => [w.address, 5])));
  });

  it("a commit whose answer was lost is not retried: each caller hears its queueId, and each write is journaled and mined once", async () => {
    store.refuseShared = false;
    store.commitThenLose = true;
    const outcomes = await Promise.allSettled(submissions("lost answer"));
    store.commitThenLose = false;
    const refusals = outcomes.map((o) => (o.status === "rejected" ? (o.reason as GatewayError) : undefined));
    expect(refusals.every((e) => e?.kind === "upstream_unavailable")).toBe(true);
    const ids = refusals.map((e) => (e!.details as { queueId: string }).queueId);
    expect(new Set(ids).size).toBe(20);
    // Journaled once each (a retry would have journaled every write a second time, at new nonces)…
    const journaled = (await store.listNewest("testnet", "pending", 1_000)).concat(
      await store.listNewest("testnet", "processing", 1_000),
      await store.listNewest("testnet", "completed", 1_000),
    );
    const ofBurst = journaled.filter((r) => Buffer.from(r.raw.slice(2), "hex").includes(Buffer.from("lost answer")));
    expect(ofBurst.map((r) => r.queueId).sort()).toEqual([...ids].sort());
    // …and sent by the journal pass like any pending write, then mined in nonce order.
    const records = await Promise.all(ids.map((id) => store.get(id).then((r) => r!)));
    await checkMined(records, new Map(wallets.map((w) => [w.address, 10])));
  });
});
