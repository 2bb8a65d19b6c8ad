// A large JSON-RPC body counts by its size (found past #62's list): one eth_call with ~1 MB of data counted
// as one request but cost the event loop ~8 ms (joined, parsed, its cache key and its upstream request
// built), so one address's 1,500 a minute could hold a quarter of the loop, and four addresses all of it.
// Now a body counts one more request for each 64 KB past the first, charged before it is parsed: past the
// limit the next ones are refused unread.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, request } from "undici";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

const LIMIT = 100;
const DATA_HEX_CHARS = 960_000;
const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "eth_call",
  params: [{ to: "0x000000000000000000000000000000000000dEaD", data: `0x${"ab".repeat(DATA_HEX_CHARS / 2)}` }, "latest"],
});

describe("a large JSON-RPC body counts by its size", () => {
  let gw: Gateway;
  let url: string;
  const agent = new Agent({ localAddress: "127.0.0.14" });
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = LIMIT) });
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await agent.close();
    await gw?.close();
  });

  it("a ~1 MB eth_call takes 15 of the caller's requests; past the limit the next are refused unread (429)", async () => {
    const post = async () => {
      const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
      const text = await res.body.text();
      return { status: res.statusCode, remaining: Number(res.headers["x-ratelimit-remaining"]), text };
    };
    // 960,102 bytes: 14 more than its one call (one per 64 KB past the first).
    const weight = 1 + Math.ceil(Buffer.byteLength(body) / 65_536) - 1;
    expect(weight).toBe(15);
    const first = await post();
    expect(first.status, first.text).toBe(200);
    expect(first.remaining).toBe(LIMIT - weight);
    const statuses: number[] = [first.status];
    for (let i = 0; i < 10; i++) statuses.push((await post()).status);
    // 100 requests a minute hold six such calls; the seventh and later are 429.
    expect(statuses.filter((s) => s === 200).length).toBe(Math.floor(LIMIT / weight));
    expect(statuses.slice(Math.floor(LIMIT / weight))).toEqual(Array(11 - Math.floor(LIMIT / weight)).fill(429));
    // A small call of another address is answered as always.
    const other = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
    });
    expect(other.status).toBe(200);
  });
});
