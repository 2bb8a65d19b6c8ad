// Test funds (RpcService.RequestTestFunds, POST /zgt/<key>/faucet) exist on the embedded dev chain only: in
// front of real nodes the gateway answers NOT_FOUND / 404 and the node is never asked to change a balance.
// A key is needed and the address is checked; the per-key request limit (and a key's daily transaction quota,
// when it has one) applies as the policy table says (walked over every wire in operationsOverTransports).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";

const ADDRESS = "0x00000000000000000000000000000000000fa0e7";

describe("test funds", () => {
  let embedded: Gateway;
  let node: EmbeddedNode;
  let fronting: Gateway;
  beforeAll(async () => {
    embedded = await startTestGateway();
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    fronting = await startTestGateway({ mutate: (c) => (c.networks[0]!.upstreams = [node.url]) });
  });
  afterAll(async () => {
    await embedded?.close();
    await fronting?.close();
    await node?.stop();
  });

  const newKey = async (gw: Gateway): Promise<string> => ((await postJson(gw.network("testnet").url + "/portal/keys", {})).json as { apiKey: string }).apiKey;

  it("the embedded chain credits an address, over REST and Connect; no key and a bad address are refused", async () => {
    const base = embedded.network("testnet").url;
    const key = await newKey(embedded);
    const rest = await postJson(`${base}/zgt/${key}/faucet`, { address: ADDRESS });
    expect(rest.status).toBe(200);
    expect(rest.json).toEqual({ success: true, address: ADDRESS, amountWei: "10000000000000000000", balanceWei: "10000000000000000000" });
    const client = createClient(
      RpcService,
      createConnectTransport({
        baseUrl: base,
        httpVersion: "1.1",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${key}`);
            return next(req);
          },
        ],
      }),
    );
    const again = await client.requestTestFunds({ address: ADDRESS });
    expect(again.balanceWei).toBe("20000000000000000000");
    const balance = await postJson(base + "/", { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [ADDRESS, "latest"] });
    expect(BigInt((balance.json as { result: string }).result)).toBe(2n * 10n ** 19n);

    const bad = await postJson(`${base}/zgt/${await newKey(embedded)}/faucet`, { address: "0x12" });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ success: false, errorCode: "VALIDATION_ERROR" });
    const keyless = await createClient(RpcService, createConnectTransport({ baseUrl: base, httpVersion: "1.1" }))
      .requestTestFunds({ address: ADDRESS })
      .catch((e: unknown) => e as ConnectError);
    expect((keyless as ConnectError).code).toBe(Code.Unauthenticated);
  });

  it("concurrent credits each count, and a key has a daily budget of credits (#51)", async () => {
    const gw = await startTestGateway({ mutate: (c) => (c.rateLimit.faucetCreditsPerDay = 8) });
    try {
      const base = gw.network("testnet").url;
      const key = await newKey(gw);
      const address = "0x00000000000000000000000000000000000fa0e8";
      // 12 at once: 8 credited, every one of them (no read-then-set race), 4 refused with 429 before the node is asked.
      const answers = await Promise.all(Array.from({ length: 12 }, () => postJson(`${base}/zgt/${key}/faucet`, { address })));
      const credited = answers.filter((a) => a.status === 200);
      expect(credited.length).toBe(8);
      expect(answers.filter((a) => a.status === 429).length).toBe(4);
      expect(answers.find((a) => a.status === 429)!.json).toMatchObject({
        success: false,
        errorCode: "RATE_LIMITED",
        error: expect.stringMatching(/8 test-fund credits per day/),
      });
      const balance = BigInt((await rpc<string>(gw.network("testnet").upstreamUrls[0]!, "eth_getBalance", [address, "latest"])) as string);
      expect(balance).toBe(8n * 10n ** 19n);
      expect(credited.map((a) => (a.json as { balanceWei: string }).balanceWei).sort()).toEqual(
        Array.from({ length: 8 }, (_, i) => String(BigInt(i + 1) * 10n ** 19n)).sort(),
      );
      // Another key has its own budget.
      expect((await postJson(`${base}/zgt/${await newKey(gw)}/faucet`, { address })).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it("in front of real nodes there is no faucet: 404 / NOT_FOUND, the balance untouched", async () => {
    const base = fronting.network("testnet").url;
    const answer = await postJson(`${base}/zgt/${await newKey(fronting)}/faucet`, { address: ADDRESS });
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ success: false, errorCode: "NOT_FOUND", error: expect.stringMatching(/embedded dev chain only/) });
    const balance = await postJson(node.url, { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [ADDRESS, "latest"] });
    expect((balance.json as { result: string }).result).toBe("0x0");
  });
});
