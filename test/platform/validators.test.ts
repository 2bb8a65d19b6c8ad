// platform_getValidatorList / platform_getActiveValidatorList: from a node's clique RPC (fake upstream: anvil
// has no consensus RPC), from a static config list, and from the embedded anvil's coinbase.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { getAddress, Wallet } from "ethers";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const V = [Wallet.createRandom().address, Wallet.createRandom().address, Wallet.createRandom().address].map((a) => a.toLowerCase());
const hashOf = (n: number) => "0x" + n.toString(16).padStart(64, "0");

/** A clique-style node: blocks 0..head, block n proposed by proposers[n % proposers.length]. */
function fakeCliqueNode(state: { head: number; proposers: string[] }) {
  const block = (n: number) =>
    n < 0 || n > state.head ? null : { number: "0x" + n.toString(16), hash: hashOf(n), miner: state.proposers[n % state.proposers.length] };
  return http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as
      | { id: number; method: string; params: string[] }
      | { id: number; method: string; params: string[] }[];
    const answer = (r: { id: number; method: string; params: string[] }) => {
      const result =
        r.method === "eth_chainId"
          ? "0x133edcb"
          : r.method === "clique_getSigners"
            ? V
            : r.method === "clique_getSignersAtHash"
              ? r.params[0] === hashOf(3)
                ? V.slice(0, 2)
                : V
              : r.method === "eth_getBlockByNumber"
                ? block(r.params[0] === "latest" ? state.head : Number(r.params[0]))
                : r.method === "eth_getBlockByHash"
                  ? block(Number(BigInt(r.params[0]!)))
                  : r.method === "eth_getBlockByNumber"
                    ? null
                    : null;
      return { jsonrpc: "2.0", id: r.id, result };
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
  });
}

const rpc = (method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id: 1, method, params });

describe("validators from the node's clique RPC", () => {
  const state = { head: 20, proposers: [V[0]!, V[1]!] };
  const node = fakeCliqueNode(state);
  let gw: Gateway;
  beforeAll(async () => {
    await new Promise<void>((r) => node.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [url];
        c.networks[0]!.validators = { source: "clique" };
        c.networks[0]!.activeValidatorWindowBlocks = 4;
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    node.closeAllConnections();
    node.close();
  });

  it("lists the set, checksummed, in the Stability shape", async () => {
    const res = await postJson(gw.network("testnet").url, rpc("platform_getValidatorList"));
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, result: { code: 200, value: V.map((a) => getAddress(a)) } });
  });

  it("active = the set's members that proposed one of the last N blocks, and it follows the proposers", async () => {
    const active = async () =>
      ((await postJson(gw.network("testnet").url, rpc("platform_getActiveValidatorList"))).json as { result: { value: string[] } }).result.value;
    expect(await active()).toEqual([getAddress(V[0]!), getAddress(V[1]!)]);
    state.proposers = [V[2]!];
    state.head = 30;
    expect(await active()).toEqual([getAddress(V[2]!)]);
  });

  it("takes an optional block hash", async () => {
    const res = await postJson(gw.network("testnet").url, rpc("platform_getValidatorList", [hashOf(3)]));
    expect((res.json as { result: { value: string[] } }).result.value).toEqual(V.slice(0, 2).map((a) => getAddress(a)));
    const bad = await postJson(gw.network("testnet").url, rpc("platform_getValidatorList", ["0x12"]));
    expect(bad.json).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/takes \[\] or \[blockHash\]/) } });
  });

  it("is served to gRPC clients too", async () => {
    const client = createClient(RpcService, createGrpcTransport({ baseUrl: gw.network("testnet").url }));
    const res = await client.getValidatorList({});
    expect(res.code).toBe(200);
    expect(res.value).toEqual(V.map((a) => getAddress(a)));
  });
});

describe("validators on the embedded node and from config", () => {
  let gw: Gateway;
  const DEV = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
  const other = Wallet.createRandom().address;
  beforeAll(async () => {
    gw = await startTestGateway({
      networks: ["testnet", "mainnet"],
      mutate: (c) => (c.networks[1]!.validators = { source: "static", addresses: [DEV.toLowerCase(), other] }),
    });
    await new Promise((r) => setTimeout(r, 600)); // a couple of blocks proposed by the new coinbase
  });
  afterAll(() => gw?.close());

  it("embedded anvil: the set is its coinbase, which is active", async () => {
    const url = gw.network("testnet").url;
    expect(((await postJson(url, rpc("platform_getValidatorList"))).json as { result: unknown }).result).toEqual({ code: 200, value: [DEV] });
    expect(((await postJson(url, rpc("platform_getActiveValidatorList"))).json as { result: unknown }).result).toEqual({ code: 200, value: [DEV] });
  });

  it("static list: listed as configured; only the proposer is active", async () => {
    const url = gw.network("mainnet").url;
    expect(((await postJson(url, rpc("platform_getValidatorList"))).json as { result: unknown }).result).toEqual({ code: 200, value: [DEV, other] });
    expect(((await postJson(url, rpc("platform_getActiveValidatorList"))).json as { result: unknown }).result).toEqual({ code: 200, value: [DEV] });
  });
});
