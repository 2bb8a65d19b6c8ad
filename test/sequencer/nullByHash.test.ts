// A write is signed once unless it is proven absent (#63). A node that answers null by hash for some mined
// transactions (an index rebuilt after a restart, limited history, a balancer's lagging member) had the
// gateway find their nonces spent "without them" after a restart and sign them again at new nonces: 869
// duplicates of 25,495 at 5 % with one kill -9, 5,863 of 22,216 at 30 % with two restarts. The gateway runs
// as a real process in front of a proxy that hides hashes; every acknowledged write must be on chain once.
import { afterAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchRpc, freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";
import { notCompleted, postJson, rpc } from "../helpers/gateway.js";

interface Block {
  transactions: { from: string; input: string; hash: string }[];
}

/** How often each message (hex input) was mined, over every block the node has. */
async function minedMessages(node: string): Promise<Map<string, number>> {
  const head = Number(await rpc<string>(node, "eth_blockNumber"));
  const blocks = await batchRpc<Block>(
    node,
    "eth_getBlockByNumber",
    Array.from({ length: head + 1 }, (_, i) => [`0x${i.toString(16)}`, true]),
  );
  const seen = new Map<string, number>();
  for (const b of blocks) for (const tx of b?.transactions ?? []) seen.set(tx.input, (seen.get(tx.input) ?? 0) + 1);
  return seen;
}

const hex = (text: string) => `0x${Buffer.from(text).toString("hex")}`;

describe("a node that answers null by hash", () => {
  const children: ChildProcess[] = [];
  let proxy: FaultyUpstream | undefined;
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    if (gw) await kill9(gw.child);
    proxy?.close();
    await Promise.all(children.map(kill9));
  });

  const cases = [
    { share: 0.05, restarts: ["kill -9", "SIGTERM"] as const },
    { share: 0.3, restarts: ["kill -9", "kill -9"] as const },
  ];
  for (const { share, restarts } of cases) {
    it(`${share * 100} % of hashes hidden, ZKT load, gateway ${restarts.join(" then ")}: every acknowledged write mined exactly once`, {
      timeout: 240_000,
    }, async () => {
      const port = await freePort();
      const node = `http://127.0.0.1:${port}`;
      children.push(await startAnvil(port));
      proxy = await startFaultyUpstream(node);
      proxy.hideHashes(share);
      const dataDir = mkdtempSync(join(tmpdir(), "gw-nullhash-"));
      const env = {
        DATA_DIR: dataDir,
        TESTNET_UPSTREAMS: proxy.url,
        STUCK_TRANSACTION_MS: "3000",
        RATE_LIMIT: "10000000",
        TRY_IT_OUT_RATE_LIMIT: "10000000",
        LOG_LEVEL: "info",
      };
      gw = await startGatewayProcess(env);
      const acknowledged = new Map<string, string>(); // message -> queueId
      let n = 0;
      const load = async (ms: number): Promise<void> => {
        const end = Date.now() + ms;
        const client = async (): Promise<void> => {
          while (Date.now() < end) {
            const message = `write ${share} ${n++}`;
            const res = await postJson(`${gw!.url}/zkt/try-it-out`, { arguments: message }).catch(() => undefined);
            if (res?.status === 200) acknowledged.set(message, (res.json as { queueId: string }).queueId);
            else await new Promise((r) => setTimeout(r, 20));
          }
        };
        await Promise.all(Array.from({ length: 8 }, client));
      };
      for (const how of restarts) {
        // Writes in flight when the gateway goes, some of them mined with hashes the node hides.
        const running = load(4_000);
        await new Promise((r) => setTimeout(r, 3_000));
        if (how === "kill -9") await kill9(gw.child);
        else {
          gw.child.kill("SIGTERM");
          await gw.exited;
        }
        await running;
        gw = await startGatewayProcess(env);
      }
      await load(2_000);
      expect(acknowledged.size).toBeGreaterThan(100);
      expect(proxy.hidden).toBeGreaterThan(0);

      // Every acknowledged message on chain, once; none twice.
      let mined = new Map<string, number>();
      await expect
        .poll(
          async () => {
            mined = await minedMessages(node);
            return [...acknowledged.keys()].filter((m) => !mined.has(hex(m))).length;
          },
          { timeout: 90_000, interval: 2_000 },
        )
        .toBe(0)
        .catch(async (err: unknown) => {
          const missing = [...acknowledged.entries()].filter(([m]) => !mined.has(hex(m))).slice(0, 5);
          for (const [m, q] of missing) console.log("unmined", m, q, await (await fetch(`${gw!.url}/zkt/transactions/${q}`)).text());
          throw err;
        });
      const twice = [...acknowledged.keys()].filter((m) => (mined.get(hex(m)) ?? 0) > 1);
      expect(twice, `${twice.length} of ${acknowledged.size} mined more than once`).toEqual([]);
      await kill9(gw.child);
      gw = undefined;
      proxy.close();
      proxy = undefined;
    });
  }

  // After a restart on a node without past states (pruned, or anvil on a dump) the gateway reads whole blocks
  // to find which transaction spent a nonce. Those are megabytes on a busy chain: read under the client-sized
  // UPSTREAM_TIMEOUT_MS they timed out, the search failed, and each hidden write waited for ever ("processing";
  // deepRewind's flake). The block reads have their own deadline, and what one pass read serves the next.
  it("no past states and whole blocks slower than UPSTREAM_TIMEOUT_MS: every hidden write is found mined, none signed twice", {
    timeout: 240_000,
  }, async () => {
    const port = await freePort();
    const node = `http://127.0.0.1:${port}`;
    children.push(await startAnvil(port));
    proxy = await startFaultyUpstream(node);
    proxy.hideHashes(0.3);
    const env = {
      DATA_DIR: mkdtempSync(join(tmpdir(), "gw-nullhash-slow-")),
      TESTNET_UPSTREAMS: proxy.url,
      STUCK_TRANSACTION_MS: "3000",
      RATE_LIMIT: "10000000",
      TRY_IT_OUT_RATE_LIMIT: "10000000",
      UPSTREAM_TIMEOUT_MS: "1000",
      LOG_LEVEL: "info",
    };
    gw = await startGatewayProcess(env);
    const acknowledged = new Map<string, string>(); // message -> queueId
    let n = 0;
    const end = Date.now() + 4_000;
    const running = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < end) {
          const message = `slow blocks ${n++}`;
          const res = await postJson(`${gw!.url}/zkt/try-it-out`, { arguments: message }).catch(() => undefined);
          if (res?.status === 200) acknowledged.set(message, (res.json as { queueId: string }).queueId);
          else await new Promise((r) => setTimeout(r, 20));
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 3_000));
    await kill9(gw.child);
    await running;
    // The node now has no past states, and a whole block takes 1.5 s: past the gateway's 1 s for a client's read.
    proxy.forgetPastStates();
    proxy.slow(1_500, /"method":"eth_getBlockByNumber","params":\["0x[0-9a-f]+",true\]/);
    gw = await startGatewayProcess(env);
    expect(acknowledged.size).toBeGreaterThan(100);

    const ids = [...acknowledged.values()];
    await expect
      .poll(async () => (await notCompleted(gw!.url, ids)).length, { timeout: 90_000, interval: 2_000 })
      .toBe(0)
      .catch(async (err: unknown) => {
        const tally = new Map<string, number>();
        for (const s of await notCompleted(gw!.url, ids)) tally.set(s.split(": ")[1]!, (tally.get(s.split(": ")[1]!) ?? 0) + 1);
        console.log("not completed", acknowledged.size, [...tally]);
        writeFileSync("test-artifacts/nullByHash-slow.log", gw!.log());
        throw err;
      });
    expect(proxy.hidden).toBeGreaterThan(0);
    expect(proxy.matched, "whole blocks were read").toBeGreaterThan(0);
    const mined = await minedMessages(node);
    const notOnce = [...acknowledged.keys()].filter((m) => mined.get(hex(m)) !== 1).map((m) => `${m}: mined ${mined.get(hex(m)) ?? 0} times`);
    expect(notOnce, `${notOnce.length} of ${acknowledged.size} not mined exactly once`).toEqual([]);
    await kill9(gw.child);
    gw = undefined;
  });
});
