// A large Connect or gRPC body counts by its size, as a JSON-RPC body does (#62's "refusals are cheap and
// counted" on every transport): a ~1 MB Call (eth_call's data) counted as one request. A declared length is
// charged at Connect's request gate, before the body is read (past the limit, refused unread: 429); gRPC's
// bodies declare none, so theirs is charged once the message has arrived, before its handler runs.
import net from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startTestGateway } from "../../helpers/gateway.js";

const LIMIT = 100;
const paramsJson = JSON.stringify([{ to: "0x000000000000000000000000000000000000dEaD", data: `0x${"ab".repeat(480_000)}` }, "latest"]);
const body = JSON.stringify({ method: "eth_call", paramsJson });

describe("a large Connect body counts by its size", () => {
  let gw: Gateway;
  const agent = new Agent({ localAddress: "127.0.0.16" });
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = LIMIT) });
  });
  afterAll(async () => {
    await agent.close();
    await gw?.close();
  });

  it("a ~1 MB Connect/JSON Call takes 15 of the caller's requests; past the limit the next are refused (429)", async () => {
    const url = `${gw.network("testnet").url}/chaingateway.rpc.v1.RpcService/Call`;
    const weight = Math.ceil(Buffer.byteLength(body) / 65_536);
    expect(weight).toBe(15);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
      const text = await res.body.text();
      if (i === 0) expect(JSON.parse(text), text).toMatchObject({ resultJson: '"0x"' });
      statuses.push(res.statusCode);
    }
    const fit = Math.floor(LIMIT / weight);
    expect(statuses).toEqual([...Array(fit).fill(200), ...Array(10 - fit).fill(429)]);
  });

  it("a ~1 MB gRPC Call (no declared length) takes 15 of the caller's requests; past the limit the next are refused", async () => {
    const url = new URL(gw.network("testnet").url);
    const transport = createGrpcTransport({
      baseUrl: url.origin,
      nodeOptions: { createConnection: () => net.connect({ host: url.hostname, port: Number(url.port), localAddress: "127.0.0.17" }) },
    });
    const client = createClient(RpcService, transport);
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      try {
        const res = await client.call({ method: "eth_call", paramsJson });
        outcomes.push(res.resultJson === '"0x"' ? "ok" : res.resultJson);
      } catch (err) {
        outcomes.push(Code[ConnectError.from(err).code] ?? "?");
      }
    }
    // The gate admits one before the message arrives, then 14 more are charged: six fit in 100.
    expect(outcomes).toEqual([...Array(6).fill("ok"), ...Array(4).fill("ResourceExhausted")]);
  });
});
