// A node that goes back any distance (#52): anvil restarted, under ZKT load, on its own state of 12, 40 and 100
// blocks before (the follower remembers confirmations for 64), once with the gateway restarted in the middle.
// Every acknowledged write ends up mined exactly once, and no write is reported completed while the node
// lacks it. (Before, a 100-block rewind left ~30 % of the writes "completed" though not on chain and every
// later write of their signers queued behind the hole.)
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { GatewayConfig } from "../../src/config/config.js";
import type { Gateway } from "../../src/gateway.js";
import { batchRpc, freePort, kill9, saveState, startAnvil, unminedAfter, whyUnmined } from "../helpers/anvilProcess.js";
import { postJson, rpc, startTestGateway, testConfig, journalOf } from "../helpers/gateway.js";

describe("a node that goes back any distance", () => {
  const children: ChildProcess[] = [];
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await Promise.all(children.map(kill9));
  });

  it("12, 40 and 100 blocks back (and a gateway restart in the middle): every acknowledged write mined once", { timeout: 300_000 }, async () => {
    const port = await freePort();
    const node = `http://127.0.0.1:${port}`;
    const dir = mkdtempSync(join(tmpdir(), "deep-rewind-"));
    // One genesis time for every start: anvil loaded from a dump it made after a load of its own reports, at
    // every other restart, the block 0 it made at that start (unless that is the same block), and the gateway
    // rightly refuses a node of another genesis. A real node keeps its genesis; this is anvil's, and it made
    // this test fail at random (every lane stuck behind a node the gateway would not use).
    const genesisTime = Math.floor(Date.now() / 1000);
    children.push(await startAnvil(port, undefined, genesisTime));
    // One config for both gateways: the same data directory (journal, keys, seed) across the restart.
    const base = testConfig({
      mutate: (c: GatewayConfig) => {
        c.networks[0]!.upstreams = [node];
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 250;
        c.stuckTransactionMs = 5_000;
        c.rateLimit.requestsPerWindow = 1_000_000;
        c.rateLimit.tryItOutRequestsPerWindow = 1_000_000;
      },
    });
    const start = () => startTestGateway({ mutate: (c) => Object.assign(c, { ...base, networks: base.networks }) });
    gw = await start();
    const keys = await Promise.all(Array.from({ length: 3 }, () => gw!.keys.create()));
    const paths = ["/zkt/try-it-out", ...keys.map((k) => `/zkt/${k.apiKey}`)];
    let url = gw.network("testnet").url;
    const acknowledged = new Map<string, string>(); // queueId → the hash it was answered with
    /** Every answer's time (ms), and when it came. */
    const answers: { ms: number; at: number }[] = [];
    let firstRewindAt = Number.POSITIVE_INFINITY;
    let stop = false;
    let n = 0;
    const client = async (path: string): Promise<void> => {
      while (!stop) {
        const t0 = performance.now();
        const res = await postJson(url + path, { arguments: `deep ${n++}` }).catch(() => undefined);
        answers.push({ ms: performance.now() - t0, at: Date.now() });
        if (res?.status === 200) {
          const { hash, queueId } = res.json as { hash: string; queueId: string };
          acknowledged.set(queueId, hash);
        } else await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all(paths.flatMap((p) => [client(p), client(p)]));
    const head = async () => Number(await rpc<string>(node, "eth_blockNumber"));

    for (const [depth, restartGateway] of [
      [12, false],
      [40, true],
      [100, false],
    ] as const) {
      const state = join(dir, `at-${depth}.json`);
      await saveState(node, state);
      const saved = Number((JSON.parse(readFileSync(state, "utf8")) as { best_block_number: string }).best_block_number);
      while ((await head()) < saved + depth) await new Promise((r) => setTimeout(r, 100));
      const before = await head();
      firstRewindAt = Math.min(firstRewindAt, Date.now());
      await kill9(children.at(-1)!);
      children.push(await startAnvil(port, undefined, genesisTime, state));
      expect(await head()).toBeLessThan(before - depth + 8);
      if (restartGateway) {
        await gw.close();
        gw = await start();
        url = gw.network("testnet").url;
      }
      // Load goes on a while on the node that went back.
      await new Promise((r) => setTimeout(r, 2_000));
    }
    stop = true;
    await load;
    // No stall: a rewind or a gateway restart does not hold answers (10 to 43 s before, waiting for the lane's
    // resends to drain). The bound leaves room for two loaded cores; answers took 1.6 s at most in a calm run.
    const slowestMs = Math.max(...answers.filter((a) => a.at > firstRewindAt).map((a) => a.ms));
    expect(slowestMs).toBeLessThan(5_000);
    expect(acknowledged.size).toBeGreaterThan(300);

    // Every acknowledged write (by queueId) completed, its journaled hash mined on the chain the node has now.
    const store = journalOf(gw);
    const ids = [...acknowledged.keys()];
    const unmined = await unminedAfter(store, node, ids);
    const why = unmined.length > 0 ? await whyUnmined(node, unmined, await Promise.all(ids.map((id) => store.get(id)))).catch((e: unknown) => String(e)) : "";
    expect(unmined.length, `${unmined.length} of ${ids.length} acknowledged writes not mined and completed${why}`).toBe(0);

    // Exactly once: a write signed again at another nonce left its first hash unmined.
    const finals = await Promise.all(ids.map((id) => store.get(id)));
    const movedFirst = ids.filter((id, i) => finals[i]!.hash !== acknowledged.get(id)).map((id) => [acknowledged.get(id)!]);
    const firstOnChain = (await batchRpc<{ blockNumber: string | null } | null>(node, "eth_getTransactionByHash", movedFirst)).filter((t) => t?.blockNumber);
    expect(firstOnChain.length).toBe(0);
    // No write is completed while the node lacks it: every completed record of this journal is on chain.
    const journal = gw.network("testnet").sequencer as unknown as { options: { network: string } };
    const completed = await store.listNewest(journal.options.network, "completed", 1_000_000);
    const onChain = await batchRpc<{ blockNumber: string | null } | null>(
      node,
      "eth_getTransactionByHash",
      completed.map((r) => [r.hash]),
    );
    expect(completed.filter((_, i) => !onChain[i]?.blockNumber).map((r) => r.queueId)).toEqual([]);
  });
});
