// A rewind the follower sees while the gateway runs (#63): the node restarted on its own state 13, 80 and 400
// blocks back under ZKT load, the gateway never restarted. Every acknowledged write is mined once within 60 s
// of the node being back, and no write reads completed while the node lacks it. (Before: 379 blocks left
// 20 % of the writes pending 7 min later; 13 blocks, 6,031 pending 3 min later.)
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { batchRpc, freePort, kill9, saveState, startAnvil, unminedAfter, whyUnmined } from "../helpers/anvilProcess.js";
import { journalOf, postJson, rpc, startTestGateway } from "../helpers/gateway.js";

describe("a rewind seen while running", () => {
  const children: ChildProcess[] = [];
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await Promise.all(children.map(kill9));
  });

  it("13, 80 and 400 blocks back, no gateway restart: every acknowledged write mined once within 60 s", { timeout: 400_000 }, async () => {
    const port = await freePort();
    const node = `http://127.0.0.1:${port}`;
    const dir = mkdtempSync(join(tmpdir(), "rewind-running-"));
    const genesisTime = Math.floor(Date.now() / 1000);
    children.push(await startAnvil(port, undefined, genesisTime));
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [node];
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 250;
        c.stuckTransactionMs = 5_000;
        c.rateLimit.requestsPerWindow = 1_000_000;
        c.rateLimit.tryItOutRequestsPerWindow = 1_000_000;
      },
    });
    const keys = await Promise.all(Array.from({ length: 7 }, () => gw!.keys.create()));
    const paths = ["/zkt/try-it-out", ...keys.map((k) => `/zkt/${k.apiKey}`)];
    const url = gw.network("testnet").url;
    const store = journalOf(gw);
    const head = async () => Number(await rpc<string>(node, "eth_blockNumber"));

    for (const depth of [13, 80, 400]) {
      const acknowledged = new Map<string, string>();
      let stop = false;
      let n = 0;
      const client = async (path: string): Promise<void> => {
        while (!stop) {
          const res = await postJson(`${url}${path}`, { arguments: `rewind ${depth} ${n++}` }).catch(() => undefined);
          if (res?.status === 200) {
            const { hash, queueId } = res.json as { hash: string; queueId: string };
            acknowledged.set(queueId, hash);
          } else await new Promise((r) => setTimeout(r, 20));
        }
      };
      const state = join(dir, `at-${depth}.json`);
      const revert = process.env.REWIND_BY === "revert";
      const snapshot = revert ? await rpc<string>(node, "evm_snapshot") : "";
      if (!revert) await saveState(node, state);
      const saved = revert ? await head() : Number((JSON.parse(readFileSync(state, "utf8")) as { best_block_number: string }).best_block_number);
      const load = Promise.all(paths.flatMap((p) => [client(p), client(p)]));
      // Writes land in the blocks the node will lose: load for up to 20 s, then empty blocks to the depth.
      const loadUntil = Date.now() + 20_000;
      while ((await head()) < saved + depth && Date.now() < loadUntil) await new Promise((r) => setTimeout(r, 100));
      const short = saved + depth - (await head());
      if (short > 0) await rpc(node, "anvil_mine", [`0x${short.toString(16)}`]);
      if (revert) await rpc(node, "evm_revert", [snapshot]);
      else {
        await kill9(children.at(-1)!);
        children.push(await startAnvil(port, undefined, genesisTime, state));
      }
      const backAt = Date.now();
      // Load goes on a little on the node that went back, then stops: what is measured is the catch-up.
      await new Promise((r) => setTimeout(r, 2_000));
      stop = true;
      await load;
      expect(acknowledged.size).toBeGreaterThan(100);
      const ids = [...acknowledged.keys()];
      const unmined = await unminedAfter(store, node, ids, Math.max(1_000, 60_000 - (Date.now() - backAt)));
      const caughtUpMs = Date.now() - backAt;
      const why = unmined.length > 0 ? await whyUnmined(node, unmined, await Promise.all(ids.map((id) => store.get(id)))).catch((e: unknown) => String(e)) : "";
      expect(unmined.length, `${depth} blocks: ${unmined.length} of ${ids.length} not mined and completed ${caughtUpMs} ms after the node was back${why}`).toBe(
        0,
      );
      console.log(`rewind ${depth}: ${ids.length} acknowledged, all mined ${caughtUpMs} ms after the node was back`);

      // Exactly once, and nothing completed that the node lacks.
      const finals = await Promise.all(ids.map((id) => store.get(id)));
      const movedFirst = ids.filter((id, i) => finals[i]!.hash !== acknowledged.get(id)).map((id) => [acknowledged.get(id)!]);
      const firstOnChain = (await batchRpc<{ blockNumber: string | null } | null>(node, "eth_getTransactionByHash", movedFirst)).filter((t) => t?.blockNumber);
      expect(firstOnChain.length).toBe(0);
    }
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
