// Connect server streams from the network's one head feed (#32), through the generated client over gRPC and
// Connect: SubscribeNewHeads, SubscribeLogs (filter in the request) and ZktService.WatchTransaction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Contract, JsonRpcProvider, Wallet } from "ethers";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { TransactionStatus, ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

describe("Connect server streams", () => {
  let gw: Gateway;
  let url: string;
  let token: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
    token = ((await postJson(url, { jsonrpc: "2.0", id: 1, method: "platform_getSupportedTokens", params: [] })).json as { result: { value: string[] } }).result
      .value[0]!;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("SubscribeNewHeads over gRPC: consecutive heads, each once, each the child of the one before", async () => {
    const client = createClient(RpcService, createGrpcTransport({ baseUrl: url }));
    const abort = new AbortController();
    const heads: { number: bigint; hash: string; parentHash: string }[] = [];
    try {
      for await (const h of client.subscribeNewHeads({}, { signal: abort.signal })) {
        heads.push(h);
        expect(h.header).toHaveProperty("stateRoot");
        if (heads.length === 5) break;
      }
    } finally {
      abort.abort();
    }
    for (let i = 1; i < heads.length; i++) {
      expect(heads[i]!.number).toBe(heads[i - 1]!.number + 1n);
      expect(heads[i]!.parentHash).toBe(heads[i - 1]!.hash);
    }
  });

  it("SubscribeLogs over Connect: the token's Transfer, filtered by address and topic", async () => {
    const client = createClient(RpcService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const abort = new AbortController();
    const stream = client.subscribeLogs({ addresses: [token], topics: [{ anyOf: [TRANSFER] }] }, { signal: abort.signal });
    const to = Wallet.createRandom().address;
    const { apiKey } = (await postJson(`${url}/portal/keys`, { label: "streams" })).json as { apiKey: string };
    const provider = new JsonRpcProvider(`${url}/zgt/${apiKey}`, undefined, { staticNetwork: true, pollingInterval: 100 });
    const sent = (async () => {
      // Once the stream is open on the gateway (its subscription is in the hub), send the transfer.
      while (gw.network("testnet").hub.size === 0) await new Promise((r) => setTimeout(r, 20));
      const erc20 = new Contract(token, ["function transfer(address,uint256) returns (bool)"], new Wallet(DEV_KEY, provider)) as unknown as {
        transfer(to: string, v: bigint): Promise<{ wait(): Promise<unknown> }>;
      };
      await (await erc20.transfer(to, 5n)).wait();
    })();
    let got: { address: string; topics: string[]; removed: boolean } | undefined;
    try {
      for await (const log of stream) {
        got = log;
        break;
      }
    } finally {
      abort.abort();
      await sent;
      provider.destroy();
    }
    expect(got!.address.toLowerCase()).toBe(token.toLowerCase());
    expect(got!.topics[0]).toBe(TRANSFER);
    expect(BigInt(got!.topics[2]!)).toBe(BigInt(to));
    expect(got!.removed).toBe(false);
  });

  it("WatchTransaction over gRPC: a ZKT write's statuses as they change, ending at completed", async () => {
    const zkt = createClient(ZktService, createGrpcTransport({ baseUrl: url }));
    const written = await zkt.writeMessage({ message: "watch me" });
    const seen: TransactionStatus[] = [];
    for await (const { status } of zkt.watchTransaction({ queueId: written.queueId })) seen.push(status!.status);
    expect(seen.at(-1)).toBe(TransactionStatus.COMPLETED);
    expect(new Set(seen).size).toBe(seen.length); // each status once
  });

  it("an unknown queueId ends the stream with not_found", async () => {
    const zkt = createClient(ZktService, createGrpcTransport({ baseUrl: url }));
    await expect(
      (async () => {
        for await (const _ of zkt.watchTransaction({ queueId: "00000000-0000-7000-8000-000000000000" })) void _;
      })(),
    ).rejects.toThrow(/not_found|no submission/i);
  });
});
