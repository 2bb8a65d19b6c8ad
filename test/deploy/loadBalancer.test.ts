// The shipped load balancer carries every transport (#65): deploy/nginx.conf in front of two replicas (shared
// PostgreSQL and Redis, one node) passes a gRPC call, stream and write from the generated Python client, a
// Connect call, a WebSocket subscription and JSON-RPC; and its sticky routing keeps a caller's filter polls on
// the replica that holds the filter (filters are each replica's own), by API key and by address. Skipped
// where nginx is not installed (.ci/run installs it).
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { postJson } from "../helpers/gateway.js";
import { type LoadBalancer, NGINX } from "../helpers/nginx.js";
import { type Replicas, startReplicas } from "../helpers/replicas.js";
import { pythonGrpcReady, runPythonClient } from "../helpers/pythonClient.js";

describe.skipIf(!NGINX)("deploy/nginx.conf carries every transport to two replicas", () => {
  let replicas: Replicas | undefined;
  let lb: LoadBalancer;
  let apiKey: string;
  const call = async (path: string, method: string, params: unknown[] = []): Promise<{ result?: unknown; error?: { message: string } }> =>
    (await postJson(lb.url + path, { jsonrpc: "2.0", id: 1, method, params })).json as { result?: unknown; error?: { message: string } };

  beforeAll(async () => {
    replicas = await startReplicas("lb-");
    lb = replicas.lb;
    apiKey = ((await postJson(lb.url + "/portal/keys", { label: "behind nginx" })).json as { apiKey: string }).apiKey;
  }, 120_000);
  afterAll(() => replicas?.stop());

  it("JSON-RPC and Connect over HTTP/1.1", async () => {
    expect((await call("/", "eth_chainId")).result).toBe("0x133edcb");
    const client = createClient(RpcService, createConnectTransport({ baseUrl: lb.url, httpVersion: "1.1" }));
    const answer = await client.call({ method: "eth_chainId" }, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(answer.result?.kind).toEqual({ case: "stringValue", value: "0x133edcb" });
  });

  it("a WebSocket subscription", { timeout: 30_000 }, async () => {
    const ws = new WebSocket(`${lb.url.replace("http", "ws")}/zgt/${apiKey}`);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const heads: string[] = [];
    const got = new Promise<void>((resolve) =>
      ws.on("message", (data: Buffer) => {
        const msg = JSON.parse(data.toString()) as { method?: string; params?: { result: { number: string } } };
        if (msg.method === "eth_subscription" && heads.push(msg.params!.result.number) === 2) resolve();
      }),
    );
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    await got;
    ws.close();
    expect(BigInt(heads[1]!)).toBeGreaterThan(BigInt(heads[0]!));
  });

  it.skipIf(!pythonGrpcReady && !process.env.CI)("gRPC over h2c: the generated Python client's call, stream and write", { timeout: 120_000 }, async () => {
    const got = await runPythonClient(lb.grpcTarget, apiKey);
    expect(got.chainId).toBe("0x133edcb");
    expect(got.heads).toHaveLength(2);
    expect(got.write).toMatchObject({ hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), status: "success" });
    expect(got.badKey).toBe("UNAUTHENTICATED");
  });

  it("sticky: a filter's polls reach the replica that holds it, by key and by address", { timeout: 30_000 }, async () => {
    // Round robin sent every other poll to the other replica: "filter not found".
    for (const [by, path] of [
      ["key", `/zgt/${apiKey}`],
      ["address", "/"],
    ] as const) {
      const id = (await call(path, "eth_newBlockFilter")).result as string;
      expect(id).toMatch(/^0x/);
      for (let i = 0; i < 20; i++) {
        const poll = await call(path, "eth_getFilterChanges", [id]);
        expect(poll.error?.message, `poll ${i} by ${by}`).toBeUndefined();
        expect(Array.isArray(poll.result)).toBe(true);
      }
    }
  });
});
