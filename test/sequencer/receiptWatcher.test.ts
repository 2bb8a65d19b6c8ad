// Following broadcast transactions until mined: by block (one eth_getBlockReceipts per new block, however many
// are outstanding), by hash when the node does not serve eth_getBlockReceipts, and by the signer's nonce for
// writes that run no code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { ReceiptWatcher } from "../../src/sequencer/receiptWatcher.js";
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

describe("receipt watcher", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    gw = await startTestGateway({ mutate: (c) => ((c.networks[0]!.upstreams = [proxy.url]), (c.rateLimit.tryItOutRequestsPerWindow = 1000)) });
    base = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  it("100 message writes complete by their signer's mined nonce: no receipt is asked for", async () => {
    proxy.slow(0, /eth_getBlockReceipts|eth_getTransactionReceipt/); // counts the gateway's receipt requests
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => postJson(`${base}/zkt/try-it-out`, { arguments: `watched ${i}` })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    await allCompleted(base, replies.map((r) => (r.json as { queueId: string }).queueId));
    // A message runs no code, so it cannot revert: its nonce passing is its outcome (a block's receipts cost
    // the node ~25 % of its intake at full load).
    expect(proxy.matched).toBe(0);
  });

  it("writes that run code still complete with block receipts, not a receipt request per transaction per poll", async () => {
    const token = await postJson(`${base}/zkt/try-it-out`, { code: "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Counter { uint256 public n; function bump() external { n++; } }" });
    const address = (token.json as { contractAddress: string }).contractAddress;
    proxy.slow(0, /eth_getTransactionReceipt/); // counts the gateway's by-hash receipt requests
    const call = { to: address, abi: ["function bump()"], method: "bump", arguments: [] };
    const replies = await Promise.all(Array.from({ length: 40 }, () => postJson(`${base}/zkt/try-it-out`, call)));
    expect(replies.every((r) => r.status === 200), JSON.stringify(replies[0]!.json)).toBe(true);
    await allCompleted(base, replies.map((r) => (r.json as { queueId: string }).queueId));
    // By hash only for stragglers (a hash tracked just after its block was read): a few requests at most.
    expect(proxy.matched).toBeLessThanOrEqual(2);
  });

  it("a node without eth_getBlockReceipts: writes still complete and wait: true still gets its receipt, by hash", async () => {
    proxy.refuse("eth_getBlockReceipts");
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(`${base}/zkt/try-it-out`, { arguments: `by hash ${i}` })));
    await allCompleted(base, replies.map((r) => (r.json as { queueId: string }).queueId));
    const deploy = await postJson(`${base}/zkt/try-it-out`, { code: "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract W { uint256 public x = 7; }" });
    expect(deploy.status).toBe(200);
    expect(deploy.json).toMatchObject({ success: true, contractAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
  });

  it("a deploy answered once mined finds the journal already saying so (its status batch is written at once)", async () => {
    const reply = await postJson(`${base}/zkt/try-it-out`, { code: "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Waited { uint256 public x = 8; }" });
    expect(reply.json).toMatchObject({ success: true, contractAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
    const status = (await (await fetch(`${base}/zkt/transactions/${(reply.json as { queueId: string }).queueId}`)).json()) as { status: string };
    expect(status.status).toBe("completed");
  });
});

describe("receipt watcher, following by nonce", () => {
  it("a journal write that fails is tried again at the next poll, not dropped", async () => {
    // The signer's mined nonce is 5: nonce 3 is mined.
    const pool: ConstructorParameters<typeof ReceiptWatcher>[0] = {
      call: async () => "0x0",
      callMany: async (calls) => calls.map(() => ({ ok: true as const, result: "0x5" })),
    };
    let failures = 1;
    const completed: string[] = [];
    const store: ConstructorParameters<typeof ReceiptWatcher>[1] = {
      async update(queueId, update) {
        if (failures-- > 0) throw new Error("disk full");
        if (update.status === "completed") completed.push(queueId);
      },
    };
    const warnings: string[] = [];
    const watcher = new ReceiptWatcher(pool, store, 20, createLogger("warn", {}, (line) => void warnings.push(line)));
    watcher.trackNonce("0x00000000000000000000000000000000000000aa", 3, "queue-3");
    const deadline = Date.now() + 5_000;
    while (completed.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    watcher.stop();
    expect(completed).toEqual(["queue-3"]);
    expect(warnings.join("\n")).toMatch(/"error":"disk full".*"msg":"receipt poll failed; will retry"/);
  });
});
