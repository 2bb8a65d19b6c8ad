// The upstream pool fails over between real nodes, and around a fake node that times out, 5xxs or lies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { openStores } from "../../src/store/openStores.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CHAIN_ID = 20180427;

async function fakeUpstream(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("upstream failover", () => {
  let a: EmbeddedNode;
  let b: EmbeddedNode;
  let gw: Gateway;
  beforeAll(async () => {
    const start = () => startEmbeddedNode({ chainId: CHAIN_ID, blockTimeSeconds: 0.25, feeMode: "zero" });
    [a, b] = await Promise.all([start(), start()]);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [a.url, b.url];
        c.upstreamTimeoutMs = 2000;
        // The load below is about failover, not limits: a fast machine sends 1500 requests in under a second.
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("an upstream killed mid-run fails over without a failed client request", async () => {
    const url = gw.network("testnet").url + "/";
    let failures = 0;
    let served = 0;
    let stopLoad = false;
    const worker = async (): Promise<void> => {
      while (!stopLoad) {
        const res = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: ["0x0000000000000000000000000000000000000001", "latest"] });
        if (res.status === 200 && (res.json as { result?: string }).result === "0x0") served++;
        else failures++;
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, worker));
    await new Promise((r) => setTimeout(r, 300));
    const before = served;
    await a.stop(); // the primary dies under load
    await new Promise((r) => setTimeout(r, 700));
    stopLoad = true;
    await load;
    expect(before).toBeGreaterThan(0);
    expect(served).toBeGreaterThan(before);
    expect(failures).toBe(0);
    const ready = (await (await fetch(gw.network("testnet").url + "/readyz")).json()) as { status: string; upstreams: { healthy: boolean }[] };
    expect(ready.status).toBe("ready");
    expect(ready.upstreams.map((u) => u.healthy)).toEqual([false, true]);
  });
});

describe("faulty fake upstreams", () => {
  let node: EmbeddedNode;
  const fakes: { url: string; close(): Promise<void> }[] = [];
  const gateways: Gateway[] = [];
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: CHAIN_ID, blockTimeSeconds: 0.25, feeMode: "zero" });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await Promise.all(fakes.map((f) => f.close()));
    await node?.stop();
  });

  const scenarios: [string, http.RequestListener][] = [
    ["times out", () => undefined],
    ["answers 503", (_req, res) => res.writeHead(503).end("busy")],
    ["answers garbage", (_req, res) => res.writeHead(200).end("<html>")],
    [
      // The usual reply layout around a result that is not one JSON value: must not be passed through.
      "answers a broken result in the usual layout",
      (req, res) => {
        let body = "";
        req.on("data", (c: Buffer) => (body += c));
        req.on("end", () => res.writeHead(200).end(`{"jsonrpc":"2.0","id":${(JSON.parse(body) as { id: number }).id},"result":<html>}`));
      },
    ],
  ];
  for (const [name, handler] of scenarios) {
    it(`a node that ${name} is skipped`, async () => {
      const fake = await fakeUpstream(handler);
      fakes.push(fake);
      const gw = await startTestGateway({
        mutate: (c) => {
          c.networks[0]!.upstreams = [fake.url, node.url];
          c.upstreamTimeoutMs = 300;
        },
      });
      gateways.push(gw);
      const res = await postJson(gw.network("testnet").url + "/", { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
      expect(res.status).toBe(200);
      expect((res.json as { result: string }).result).toMatch(/^0x/);
    });
  }

  it("a node that lies about its chain id is marked unhealthy", async () => {
    const liar = await fakeUpstream((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":0,"result":"0x1"}'));
    fakes.push(liar);
    const gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [liar.url, node.url];
      },
    });
    gateways.push(gw);
    const ready = (await (await fetch(gw.network("testnet").url + "/readyz")).json()) as { upstreams: { healthy: boolean; lastError?: string }[] };
    expect(ready.upstreams[0]!.healthy).toBe(false);
    expect(ready.upstreams[0]!.lastError).toMatch(/reports chain id "0x1"/);
    const res = await postJson(gw.network("testnet").url + "/", { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    expect((res.json as { result: string }).result).toMatch(/^0x/);
  });

  it("with no reachable upstream: 503 and readiness false", async () => {
    const dead = await fakeUpstream((_req, res) => res.writeHead(502).end());
    fakes.push(dead);
    // A network's chain is learned from a node once, then pinned (chain/chainGenesis.ts): this one's was, at
    // an earlier start; a very first start waits for a node to say.
    const dataDir = mkdtempSync(join(tmpdir(), "gw-pinned-"));
    const stores = await openStores({ dataDir });
    await stores.journal.pinGenesis("testnet", "0x" + "ab".repeat(32));
    await stores.close();
    const gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [dead.url];
        c.dataDir = dataDir;
      },
    });
    gateways.push(gw);
    const res = await postJson(gw.network("testnet").url + "/", { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    expect(res.status).toBe(503);
    expect((res.json as { error: { message: string } }).error.message).toMatch(/no healthy upstream/);
    expect((await fetch(gw.network("testnet").url + "/readyz")).status).toBe(503);
  });
});
