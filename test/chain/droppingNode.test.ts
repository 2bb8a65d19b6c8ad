// A node that drops sends repeatedly is sent no writes while another node takes them (#63). Two proxies in
// front of one chain: A answers every eth_sendRawTransaction with its hash and never forwards it; B is down
// at first, so A is the only node writes can go to. The writes A dropped are found held by no node and sent
// again; after three, A's writes are paused (counted, and shown by ListUpstreams' writes_paused). Once B is
// back every write goes to B alone: A is sent nothing more, and every acknowledged write is mined once.
import { afterAll, describe, expect, it } from "vitest";
import { batchRpc } from "../helpers/anvilProcess.js";
import type { FaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";
import { type ProxiedChain, proxiedChain } from "../helpers/proxiedChain.js";
import { until } from "../helpers/until.js";

describe("a node that drops every send, beside one that does not", () => {
  let chain: ProxiedChain | undefined;
  afterAll(() => chain?.close());

  it("is sent no writes once it dropped three, and every acknowledged write is mined once", { timeout: 120_000 }, async () => {
    chain = await proxiedChain(2);
    const { node } = chain;
    const [dropper, other] = chain.proxies as [FaultyUpstream, FaultyUpstream];
    dropper.dropSends(1);
    other.down = true;
    const gw = (chain.gateway = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [dropper.url, other.url];
        c.networks[0]!.blockTimeSeconds = 0.25;
        c.stuckTransactionMs = 60_000;
        c.droppedSendMs = 1_000;
        c.rateLimit.tryItOutRequestsPerWindow = 1_000_000;
      },
    }));
    const base = gw.network("testnet").url;
    const metrics = async (): Promise<string> => (await fetch(`${base}/metrics`)).text();
    const labelOf = (p: FaultyUpstream): string => new URL(p.url).host.replace(/\./g, "\\.");
    const paused = async (): Promise<boolean> =>
      new RegExp(`gateway_upstream_writes_paused\\{network="testnet",upstream="http://${labelOf(dropper)}"\\} 1`).test(await metrics());
    const write = async (n: number): Promise<string> => {
      const res = await postJson(`${base}/zkt/try-it-out`, { arguments: `dropped by one node? ${n}` });
      expect(res.status, res.text).toBe(200);
      return (res.json as { hash: string }).hash;
    };

    // Only the dropper takes writes: they are lost, found held by no node, sent again, lost again.
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) hashes.push(await write(i));
    await until(paused, 30_000);
    const dropped = Number(
      new RegExp(`gateway_upstream_dropped_writes_total\\{network="testnet",upstream="http://${labelOf(dropper)}"\\} (\\d+)`).exec(await metrics())?.[1],
    );
    expect(dropped).toBeGreaterThanOrEqual(3);

    // The other node is back: every write goes to it alone, the dropped ones too.
    other.down = false;
    await until(async () => new RegExp(`gateway_upstream_healthy\\{network="testnet",upstream="http://${labelOf(other)}"\\} 1`).test(await metrics()), 15_000);
    const sentToDropper = dropper.lost;
    for (let i = 5; i < 25; i++) hashes.push(await write(i));
    await until(async () => {
      const receipts = await batchRpc<{ blockNumber: string } | null>(
        node,
        "eth_getTransactionReceipt",
        hashes.map((h) => [h]),
      );
      return receipts.every((r) => r !== null);
    }, 30_000);
    expect(dropper.lost, "sends that reached the dropper after its writes were paused").toBe(sentToDropper);
    expect(Number(await rpc<string>(node, "eth_getTransactionCount", [gw.publicSignerAddress, "latest"]))).toBe(hashes.length);
  });
});
