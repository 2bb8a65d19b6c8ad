// The sequencer under load and faults: one signer, many concurrent writes, an upstream that fails
// transiently while broadcasting, and one that answers for transactions it then loses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider } from "ethers";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { fromJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";

describe("sequencer: 200 concurrent writes through one signer", () => {
  let gw: Gateway;
  beforeAll(async () => {
    // try-it-out's own limit (100/min by default) would refuse half of this burst.
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.tryItOutRequestsPerWindow = 1000) });
  });
  afterAll(() => gw?.close());

  it("all mine, nonces consecutive, no duplicates", async () => {
    const base = gw.network("testnet").url;
    const provider = new JsonRpcProvider(gw.network("testnet").upstreamUrls[0], undefined, { staticNetwork: true, pollingInterval: 100 });
    const start = await provider.getTransactionCount(gw.publicSignerAddress, "pending");
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => postJson(base + "/zkt/try-it-out", { arguments: `message ${i}`, id: i })));
    expect(replies.map((r) => r.status)).toEqual(Array(200).fill(200));
    const hashes = replies.map((r) => (r.json as { hash: string }).hash);
    expect(new Set(hashes).size).toBe(200);
    const receipts = await Promise.all(hashes.map((h) => provider.waitForTransaction(h, 1, 30_000)));
    expect(receipts.every((r) => r?.status === 1)).toBe(true);
    const txs = await Promise.all(hashes.map((h) => provider.getTransaction(h)));
    const nonces = txs.map((t) => t!.nonce).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 200 }, (_, i) => start + i));
    expect(await provider.getTransactionCount(gw.publicSignerAddress, "latest")).toBe(start + 200);
    provider.destroy();
  });
});

describe("sequencer: transient broadcast failures, and a node that loses transactions", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let gw: Gateway;

  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.stuckTransactionMs = 1_500;
        c.receiptWaitMs = 1_000;
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  it("an upstream that returns 503 twice still gets the transaction, once", async () => {
    const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 100 });
    const before = await provider.getTransactionCount(gw.publicSignerAddress, "latest");
    proxy.failNext(2, /eth_sendRawTransaction/);
    const res = await postJson(gw.network("testnet").url + "/zkt/try-it-out", { arguments: "survives two 503s" });
    expect(res.status).toBe(200);
    const hash = (res.json as { hash: string }).hash;
    const receipt = await provider.waitForTransaction(hash, 1, 20_000);
    expect(receipt?.status).toBe(1);
    expect(proxy.matched).toBe(3);
    expect(await provider.getTransactionCount(gw.publicSignerAddress, "latest")).toBe(before + 1);
    provider.destroy();
  });

  it("what the node answered but never mined is sent again, and the nonces behind it mine", async () => {
    const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 100 });
    const before = await provider.getTransactionCount(gw.publicSignerAddress, "latest");
    // As a node restarted with an empty pool would: it said yes to the first two, then forgot them.
    proxy.lose(2);
    const hashes: string[] = [];
    const queueIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await postJson(gw.network("testnet").url + "/zkt/try-it-out", { arguments: `lost and found ${i}` });
      expect(res.status).toBe(200);
      hashes.push((res.json as { hash: string }).hash);
      queueIds.push((res.json as { queueId: string }).queueId);
    }
    const receipts = await Promise.all(hashes.map((h) => provider.waitForTransaction(h, 1, 20_000)));
    expect(proxy.lost).toBe(2);
    expect(receipts.every((r) => r?.status === 1)).toBe(true);
    expect((await Promise.all(hashes.map((h) => provider.getTransaction(h)))).map((t) => t!.nonce)).toEqual([0, 1, 2, 3, 4].map((i) => before + i));
    expect(await provider.getTransactionCount(gw.publicSignerAddress, "latest")).toBe(before + 5);
    // The journal follows: each record completes once mined.
    await expect
      .poll(
        async () =>
          Promise.all(
            queueIds.map(async (id) => ((await (await fetch(`${gw.network("testnet").url}/zkt/transactions/${id}`)).json()) as { status: string }).status),
          ),
        { timeout: 10_000 },
      )
      .toEqual(Array(5).fill("completed"));
    provider.destroy();
  });

  it("a write answered 503 after it was journaled (not mined in time) replays that answer to a retry with its Idempotency-Key (REST and Connect), and is sent once", async () => {
    const url = gw.network("testnet").url + "/zkt/try-it-out";
    const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 100 });
    const deployed = await postJson(url, { code: "pragma solidity ^0.8.0; contract C { uint256 public n; function inc() public { n += 1; } }" });
    const to = (deployed.json as { contractAddress: string }).contractAddress;
    const abi = [
      { type: "function", name: "inc", inputs: [], outputs: [], stateMutability: "nonpayable" },
      { type: "function", name: "n", inputs: [], outputs: [{ name: "", type: "uint256" }], stateMutability: "view" },
    ];
    // The node loses it, so it is not mined within RECEIPT_WAIT_MS (1 s here): 503, though journaled.
    proxy.lose(1);
    const headers = { "idempotency-key": "inc-once" };
    const first = await postJson(url, { to, abi, method: "inc", arguments: [], wait: true }, headers);
    expect(first.status).toBe(503);
    expect(first.json).toMatchObject({ success: false, errorCode: "UPSTREAM_UNAVAILABLE" });
    const retry = await postJson(url, { to, abi, method: "inc", arguments: [], wait: true }, headers);
    expect(retry.status).toBe(503);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json).toEqual(first.json);
    // Sent again by the sequencer (not by the retry), it mines once.
    const queueId = (first.json as { details: { queueId: string } }).details.queueId;
    await expect
      .poll(async () => ((await (await fetch(`${gw.network("testnet").url}/zkt/transactions/${queueId}`)).json()) as { status: string }).status, {
        timeout: 15_000,
      })
      .toBe("completed");
    const n = await postJson(url, { to, abi, method: "n", arguments: [] });
    expect((n.json as { output: unknown }).output).toEqual(["1"]);

    // Over Connect the same: the error after journaling is kept and replays as the same error.
    const client = createClient(ZktService, createConnectTransport({ baseUrl: gw.network("testnet").url, httpVersion: "1.1" }));
    const call = () =>
      client
        .writeContract({
          to,
          abi: fromJson(ListValueSchema, abi as never),
          method: "inc",
          arguments: fromJson(ListValueSchema, []),
          wait: true,
          idempotencyKey: "inc-connect",
        })
        .catch((e: unknown) => e as ConnectError);
    proxy.lose(1);
    const [once, again] = [await call(), await call()];
    expect(once).toBeInstanceOf(ConnectError);
    expect([(once as ConnectError).code, (again as ConnectError).code]).toEqual([Code.Unavailable, Code.Unavailable]);
    expect((again as ConnectError).rawMessage).toBe((once as ConnectError).rawMessage);
    await expect
      .poll(async () => ((await postJson(url, { to, abi, method: "n", arguments: [] })).json as { output: unknown }).output, { timeout: 15_000 })
      .toEqual(["2"]);
    // Settled: no third increment arrives later.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(((await postJson(url, { to, abi, method: "n", arguments: [] })).json as { output: unknown }).output).toEqual(["2"]);
    provider.destroy();
  });
});
