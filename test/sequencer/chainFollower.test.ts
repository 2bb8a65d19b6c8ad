// Following broadcast writes until confirmed: one block read per new block, however many are outstanding;
// receipts only for writes that run code or that a caller waits on; a node that goes back is noticed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { ChainFollower } from "../../src/sequencer/chainFollower.js";
import type { RpcOutcome } from "../../src/chain/upstreamReplies.js";
import { createLogger } from "../../src/log/logger.js";

async function allCompleted(base: string, queueIds: string[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const statuses = await Promise.all(queueIds.map(async (q) => ((await (await fetch(`${base}/zkt/transactions/${q}`)).json()) as { status: string }).status));
    if (statuses.every((s) => s === "completed")) return;
    if (Date.now() > deadline) throw new Error(`not all completed: ${statuses.join(",")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("chain follower", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.rateLimit.tryItOutRequestsPerWindow = 1000;
      },
    });
    base = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  it("100 message writes complete from the blocks alone: no receipt is asked for", async () => {
    proxy.slow(0, /eth_getBlockReceipts|eth_getTransactionReceipt/); // counts the gateway's receipt requests
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => postJson(`${base}/zkt/try-it-out`, { arguments: `watched ${i}` })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    await allCompleted(
      base,
      replies.map((r) => (r.json as { queueId: string }).queueId),
    );
    // A message runs no code, so it cannot revert: its hash in a block is its outcome.
    expect(proxy.matched).toBe(0);
  });

  it("writes that run code complete with one receipt each (in a batch per block), not one per poll", async () => {
    const token = await postJson(`${base}/zkt/try-it-out`, {
      code: "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Counter { uint256 public n; function bump() external { n++; } }",
    });
    const address = (token.json as { contractAddress: string }).contractAddress;
    proxy.slow(0, /eth_getTransactionReceipt/); // counts the gateway's receipt requests (HTTP requests, batched)
    const call = { to: address, abi: ["function bump()"], method: "bump", arguments: [] };
    const replies = await Promise.all(Array.from({ length: 40 }, () => postJson(`${base}/zkt/try-it-out`, call)));
    expect(
      replies.every((r) => r.status === 200),
      JSON.stringify(replies[0]!.json),
    ).toBe(true);
    await allCompleted(
      base,
      replies.map((r) => (r.json as { queueId: string }).queueId),
    );
    // One batch per block that held some of them, plus stragglers: far fewer requests than writes.
    expect(proxy.matched).toBeLessThanOrEqual(20);
  });

  it("a node without eth_getBlockReceipts: writes still complete and a deploy still gets its receipt", async () => {
    proxy.refuse("eth_getBlockReceipts");
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(`${base}/zkt/try-it-out`, { arguments: `by hash ${i}` })));
    await allCompleted(
      base,
      replies.map((r) => (r.json as { queueId: string }).queueId),
    );
    const deploy = await postJson(`${base}/zkt/try-it-out`, {
      code: "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract W { uint256 public x = 7; }",
    });
    expect(deploy.status).toBe(200);
    expect(deploy.json).toMatchObject({ success: true, contractAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
  });

  it("a deploy answered once mined is completed in the journal at the confirmation depth, not before", async () => {
    const reply = await postJson(`${base}/zkt/try-it-out`, {
      code: "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Waited { uint256 public x = 8; }",
    });
    expect(reply.json).toMatchObject({ success: true, contractAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
    const queueId = (reply.json as { queueId: string }).queueId;
    const status = (await (await fetch(`${base}/zkt/transactions/${queueId}`)).json()) as { status: string };
    expect(status.status).not.toBe("completed"); // mined, one block deep of two
    await allCompleted(base, [queueId]);
  });
});

/** A follower of `pool` (20 ms polls) that records the journal's status changes and the forks it went back to. */
function recordingFollower(pool: ConstructorParameters<typeof ChainFollower>[0]["pool"], confirmations = 1) {
  const statuses: [string, string][] = [];
  const rewinds: number[] = [];
  const follower = new ChainFollower({
    pool,
    store: { update: async (queueId, u) => void statuses.push([queueId, u.status!]) },
    pollMs: 20,
    confirmations,
    log: createLogger("error"),
    onRewind: (fork) => void rewinds.push(fork),
  });
  return { follower, statuses, rewinds };
}

/** The follower went back once, to block 3 or below (it may know less than the real fork), and reopened `queueId`. */
async function expectWentBackOnce(rewinds: number[], statuses: [string, string][], queueId: string): Promise<void> {
  await expect.poll(() => rewinds.length, { timeout: 2_000 }).toBe(1);
  await new Promise((r) => setTimeout(r, 100));
  expect(rewinds).toHaveLength(1);
  expect(rewinds[0]).toBeLessThanOrEqual(3);
  expect(statuses).toEqual([
    [queueId, "completed"],
    [queueId, "pending"],
  ]);
}

/** A scripted chain whose block 4 holds `queueId`'s write, and the follower that has completed it. */
async function confirmedInBlock4(queueId: string) {
  const { chain, mine, pool } = scriptedChain();
  for (let n = 1; n <= 3; n++) mine(n, []);
  const recording = recordingFollower(pool);
  recording.follower.track(`0x${queueId}`, queueId, { runsCode: false });
  mine(4, [`0x${queueId}`]);
  await expect.poll(() => recording.statuses, { timeout: 2_000 }).toEqual([[queueId, "completed"]]);
  return { chain, mine, ...recording };
}

/** A scripted chain for the follower: blocks by number, each holding the given transaction hashes. */
function scriptedChain() {
  const chain = { head: 0, blocks: new Map<number, { hash: string; parentHash: string; transactions: string[] }>() };
  const mine = (n: number, txs: string[], fork = "a"): void => {
    const parent = chain.blocks.get(n - 1)?.hash ?? "0x00";
    chain.blocks.set(n, { hash: `0x${fork}${n}`, parentHash: parent, transactions: txs });
    chain.head = n;
  };
  const answer = (method: string, params: unknown[]): RpcOutcome => {
    if (method === "eth_blockNumber") return { ok: true, result: "0x" + chain.head.toString(16) };
    if (method === "eth_getBlockByNumber") {
      const n = Number(params[0]);
      const b = n <= chain.head ? chain.blocks.get(n) : undefined;
      return { ok: true, result: b ? { number: params[0] as string, ...b } : null };
    }
    if (method === "eth_getTransactionReceipt") {
      for (const [n, b] of chain.blocks) {
        if (n <= chain.head && b.transactions.includes(params[0] as string))
          return {
            ok: true,
            result: {
              status: "0x1",
              blockNumber: "0x" + n.toString(16),
              blockHash: b.hash,
              transactionHash: params[0] as string,
              gasUsed: "0x0",
              contractAddress: null,
              logs: [],
            },
          };
      }
      return { ok: true, result: null };
    }
    return { ok: false, error: new Error(method) as never };
  };
  const pool: ConstructorParameters<typeof ChainFollower>[0]["pool"] = {
    call: async (method, params) => {
      const o = answer(method, params);
      if (!o.ok) throw o.error;
      return o.result;
    },
    callMany: async (calls) => calls.map((c) => answer(c.method, c.params)),
  };
  return { chain, mine, pool };
}

describe("chain follower, against a scripted node", () => {
  it("a journal write that fails is tried again at the next poll, not dropped", async () => {
    const { mine, pool } = scriptedChain();
    mine(1, []);
    let failures = 1;
    const completed: string[] = [];
    const warnings: string[] = [];
    const follower = new ChainFollower({
      pool,
      store: {
        async update(queueId, update) {
          if (failures-- > 0) throw new Error("disk full");
          if (update.status === "completed") completed.push(queueId);
        },
      },
      pollMs: 20,
      confirmations: 1,
      log: createLogger("warn", {}, (line) => void warnings.push(line)),
    });
    follower.track("0xt3", "queue-3", { runsCode: false });
    mine(2, ["0xt3"]);
    const deadline = Date.now() + 5_000;
    while (completed.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    follower.stop();
    expect(completed).toEqual(["queue-3"]);
    expect(warnings.join("\n")).toMatch(/"error":"disk full".*"msg":"journal update failed; will retry"/);
  });

  it("a write completed at depth goes back to pending when the node goes back below its block, and the journal is re-sent", async () => {
    const { chain, mine, pool } = scriptedChain();
    mine(1, []);
    const { follower, statuses, rewinds } = recordingFollower(pool, 2);
    follower.track("0xw", "queue-w", { runsCode: false, signer: "0xaa" });
    mine(2, ["0xw"]);
    await new Promise((r) => setTimeout(r, 100));
    expect(statuses).toEqual([]); // one block deep of two: not yet
    expect(follower.stats()).toMatchObject({ unconfirmed: 1, lanesLagging: 1, maxLag: 1 });
    mine(3, []);
    await expect.poll(() => statuses, { timeout: 2_000 }).toEqual([["queue-w", "completed"]]);
    expect(follower.stats()).toMatchObject({ unconfirmed: 0, lanesLagging: 0 });
    // The node restarts on older state: head 1. The idle follower hears it from a probe's head.
    chain.head = 1;
    follower.observeHead("0x1");
    await expect.poll(() => rewinds, { timeout: 2_000 }).toEqual([1]);
    expect(statuses).toEqual([
      ["queue-w", "completed"],
      ["queue-w", "pending"],
    ]);
    // Mined again on the node's new blocks (a different block 2): completed again once deep enough.
    mine(2, ["0xw"], "b");
    mine(3, [], "b");
    await expect.poll(() => statuses.length, { timeout: 2_000 }).toBe(3);
    expect(statuses[2]).toEqual(["queue-w", "completed"]);
    follower.stop();
  });

  it("a reorg (same height, another parent) is found by the parent hash check", async () => {
    const { mine, pool } = scriptedChain();
    mine(1, []);
    const rewinds: number[] = [];
    const follower = new ChainFollower({
      pool,
      store: { update: async () => undefined },
      pollMs: 20,
      confirmations: 3,
      log: createLogger("error"),
      onRewind: (f) => void rewinds.push(f),
    });
    follower.track("0xr", "queue-r", { runsCode: false });
    mine(2, ["0xr"]);
    await new Promise((r) => setTimeout(r, 100));
    // Blocks 2.. replaced by another fork without the write, then a block on top.
    mine(2, [], "c");
    mine(3, [], "c");
    await expect.poll(() => rewinds, { timeout: 2_000 }).toEqual([1]);
    expect(follower.stats().unconfirmed).toBe(1);
    follower.stop();
  });

  it("a node that went back and then mined far past the last block walked (a gap the walk skips) is still noticed", async () => {
    const { chain, mine, pool } = scriptedChain();
    for (let n = 1; n <= 3; n++) mine(n, []);
    let down = false;
    const flaky: typeof pool = {
      call: (m, p) => (down ? Promise.reject(new Error("connection refused")) : pool.call(m, p)),
      callMany: (c) => (down ? Promise.reject(new Error("connection refused")) : pool.callMany(c)),
    };
    const { follower, statuses, rewinds } = recordingFollower(flaky);
    follower.track("0xgone", "queue-gone", { runsCode: false });
    follower.track("0xlater", "queue-later", { runsCode: false });
    mine(4, ["0xgone"]);
    mine(5, []);
    await expect.poll(() => statuses, { timeout: 2_000 }).toEqual([["queue-gone", "completed"]]);
    // Out of reach while the node restarts on older state (block 3) and mines 40 blocks of another history,
    // more than one poll reads: the follower comes back to a head far past the last block it walked.
    down = true;
    await new Promise((r) => setTimeout(r, 100));
    chain.head = 3;
    for (let n = 4; n <= 45; n++) mine(n, [], "b");
    down = false;
    // Noticed once, at or below the real fork (block 3): the follower walked from block 5 only, so it cannot
    // know more than that block 4 is not it.
    await expectWentBackOnce(rewinds, statuses, "queue-gone");
    follower.stop();
  });

  it("a receipt from a node ahead of the walk completes nothing until the walk reaches its block, which may not hold it", async () => {
    const { chain, mine, pool } = scriptedChain();
    for (let n = 1; n <= 4; n++) mine(n, []);
    // Blocks by number come from a replica that has only up to block 4; receipts from one ahead.
    let walkable = 4;
    const split: typeof pool = {
      call: (m, p) => pool.call(m, p),
      callMany: async (calls) =>
        (await pool.callMany(calls)).map((o, i) =>
          calls[i]!.method === "eth_getBlockByNumber" && Number(calls[i]!.params[0]) > walkable ? { ok: true, result: null } : o,
        ),
    };
    const { follower, statuses } = recordingFollower(split);
    follower.track("0xahead", "queue-ahead", { runsCode: false });
    mine(5, ["0xahead"]);
    mine(6, []);
    await new Promise((r) => setTimeout(r, 1_500)); // past the follower's ask by hash
    expect(statuses).toEqual([]);
    // The ahead replica's blocks 5.. were another history: the chain all replicas agree on has not the write.
    chain.head = 4;
    mine(5, [], "b");
    mine(6, [], "b");
    walkable = 6;
    await new Promise((r) => setTimeout(r, 300));
    expect(statuses).toEqual([]);
    // Mined later, it is found in its new block and completed.
    mine(7, ["0xahead"], "b");
    walkable = 7;
    await expect.poll(() => statuses, { timeout: 3_000 }).toEqual([["queue-ahead", "completed"]]);
    follower.stop();
  });

  it("an idle follower that starts again after the node went back and past its last block notices it", async () => {
    const { chain, mine, follower, statuses, rewinds } = await confirmedInBlock4("queue-idle");
    // Idle (nothing unfinished, no calls): the node goes back to block 3 and mines 40 blocks without the write.
    chain.head = 3;
    for (let n = 4; n <= 45; n++) mine(n, [], "b");
    follower.observeHead("0x2d"); // the probes only ever saw it ahead
    follower.track("0xnext", "queue-next", { runsCode: false });
    await expectWentBackOnce(rewinds, statuses, "queue-idle");
    follower.stop();
  });

  it("an idle follower told only the heads of its probes notices a node that went back and mined past its last block", async () => {
    const { chain, mine, follower, statuses, rewinds } = await confirmedInBlock4("queue-quiet");
    // No write follows. Between two probes the node goes back to block 3 and mines two blocks without it.
    chain.head = 3;
    mine(4, [], "b");
    mine(5, [], "b");
    follower.observeHead("0x5");
    await expectWentBackOnce(rewinds, statuses, "queue-quiet");
    follower.stop();
  });

  it("with nothing unfinished and its last confirmation 64 blocks deep it makes no upstream call at all", async () => {
    const { mine, pool } = scriptedChain();
    let calls = 0;
    const counting: typeof pool = {
      call: (m, p) => {
        calls++;
        return pool.call(m, p);
      },
      callMany: (c) => {
        calls += c.length;
        return pool.callMany(c);
      },
    };
    const follower = new ChainFollower({ pool: counting, store: { update: async () => undefined }, pollMs: 10, confirmations: 1, log: createLogger("error") });
    follower.track("0xi", "queue-i", { runsCode: false });
    mine(1, ["0xi"]);
    await expect.poll(() => follower.stats().unconfirmed, { timeout: 2_000 }).toBe(0);
    // While its confirmation could still be undone (64 blocks), each head a probe sees has the last block read again.
    let n = 2;
    for (; n <= 70; n++) {
      mine(n, []);
      follower.observeHead("0x" + n.toString(16));
      await new Promise((r) => setTimeout(r, 25));
    }
    const after = calls;
    for (; n < 80; n++) {
      mine(n, []);
      follower.observeHead("0x" + n.toString(16));
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(after);
    follower.stop();
  });
});
