// Cost grows with work, not with every signer ever seen: once every write is confirmed, an idle gateway's
// upstream calls (counted at the upstream) stay a small constant, the same at 100 and at 1,000 signers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";

describe("an idle gateway", () => {
  let node: EmbeddedNode;
  let proxy: FaultyUpstream;
  let gw: Gateway;
  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    proxy = await startFaultyUpstream(node.url);
    gw = await startTestGateway({ mutate: (c) => (c.networks[0]!.upstreams = [proxy.url]) });
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    await node?.stop();
  });

  /** `count` new keys write one message each; resolves once all are completed. */
  async function writeWithNewKeys(count: number): Promise<void> {
    const base = gw.network("testnet").url;
    const keys = await Promise.all(Array.from({ length: count }, () => gw.keys.create()));
    const queueIds: string[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      const replies = await Promise.all(keys.slice(i, i + 100).map((k) => postJson(`${base}/zkt/${k.apiKey}`, { arguments: "one write" })));
      for (const r of replies) {
        expect(r.status, r.text).toBe(200);
        queueIds.push((r.json as { queueId: string }).queueId);
      }
    }
    const deadline = Date.now() + 60_000;
    for (let pending = queueIds; pending.length > 0; ) {
      const statuses = await Promise.all(
        pending.map(async (q) => ((await (await fetch(`${base}/zkt/transactions/${q}`)).json()) as { status: string }).status),
      );
      pending = pending.filter((_, i) => statuses[i] !== "completed");
      if (Date.now() > deadline) throw new Error(`${pending.length} writes not completed`);
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * Upstream calls per probe over `ms` of idleness. The gateway's idle work is paced by its probe (one a second),
   * so calls are counted per probe seen in the window: a fixed window of wall time holds one probe more or less
   * by where it falls (15 against 20 calls in 4 s failed a CI run), a count per probe does not.
   */
  async function idleCallsPerProbe(ms: number): Promise<{ perProbe: number; calls: number; probes: number }> {
    await new Promise((r) => setTimeout(r, 3_000)); // past the periodic pass and the last confirmations
    const before = { calls: proxy.calls, probes: proxy.callsOf("eth_syncing") };
    await new Promise((r) => setTimeout(r, ms));
    const calls = proxy.calls - before.calls;
    const probes = proxy.callsOf("eth_syncing") - before.probes;
    return { perProbe: calls / probes, calls, probes };
  }

  it("makes at most 5 upstream calls a second after 100 and after 1,000 signers wrote, the same figure", async () => {
    await writeWithNewKeys(100);
    const at100 = await idleCallsPerProbe(6_000);
    await writeWithNewKeys(900);
    const at1000 = await idleCallsPerProbe(6_000);
    console.log(`idle upstream calls: after 100 signers ${JSON.stringify(at100)}, after 1,000 ${JSON.stringify(at1000)}`);
    // The probe's own calls (4, one probe a second), and for 64 blocks after the last confirmation one read of
    // the last block walked per probe (a node that went back and past it between two probes: chainFollower.ts).
    expect(at100.probes).toBeGreaterThanOrEqual(4);
    expect(at1000.probes).toBeGreaterThanOrEqual(4);
    expect(at100.perProbe).toBeLessThanOrEqual(5);
    expect(at1000.perProbe).toBeLessThanOrEqual(5);
    expect(at1000.perProbe).toBeLessThanOrEqual(at100.perProbe + 1);
    // No per-signer series in the metrics: the scrape does not grow with signers.
    const metrics = await (await fetch(`${gw.network("testnet").url}/metrics`)).text();
    expect(metrics).not.toMatch(/signer="/);
    expect(metrics).toMatch(/gateway_lanes_lagging\{network="testnet"\} 0/);
  }, 150_000);
});
