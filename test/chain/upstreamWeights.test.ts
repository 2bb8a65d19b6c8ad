// networks.*.weights (#67): a node's routing score is divided by its weight. Two proxies in front of one
// chain, equally fast: reads go to the one weighing 50, and to the other once the weights are swapped (as a
// reload does, UpstreamPool.setWeights). Config refuses a weight for a URL that is not one of the upstreams.
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { UpstreamPool } from "../../src/chain/upstreamPool.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config.js";
import { createLogger } from "../../src/log/logger.js";
import { CHAIN_ID, freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "../helpers/faultyUpstream.js";

describe("upstream weights", () => {
  const children: ChildProcess[] = [];
  const proxies: FaultyUpstream[] = [];
  let pool: UpstreamPool | undefined;
  afterAll(async () => {
    pool?.stop();
    for (const p of proxies) p.close();
    await Promise.all(children.map(kill9));
  });

  it("reads go to the heavier node, and follow a change of weights", { timeout: 60_000 }, async () => {
    const port = await freePort();
    children.push(await startAnvil(port));
    const [a, b] = [await startFaultyUpstream(`http://127.0.0.1:${port}`), await startFaultyUpstream(`http://127.0.0.1:${port}`)];
    proxies.push(a, b);
    pool = new UpstreamPool({
      urls: [a.url, b.url],
      chainId: CHAIN_ID,
      timeoutMs: 5_000,
      probeIntervalMs: 60_000,
      log: createLogger("silent"),
      routing: { hedge: false },
      batchReads: false,
    });
    await pool.start();
    const reads = async (): Promise<[number, number]> => {
      const [beforeA, beforeB] = [a.calls, b.calls];
      for (let i = 0; i < 40; i++) await pool!.call("eth_getBalance", [`0x${(0xbeef00 + i).toString(16).padStart(40, "0")}`, "latest"]);
      return [a.calls - beforeA, b.calls - beforeB];
    };
    pool.setWeights({ [b.url]: 50 });
    const [toA, toB] = await reads();
    expect(toB, `A ${toA}, B ${toB}`).toBeGreaterThanOrEqual(36);
    pool.setWeights({ [a.url]: 50 });
    const [toA2, toB2] = await reads();
    expect(toA2, `A ${toA2}, B ${toB2}`).toBeGreaterThanOrEqual(36);
    expect(pool.states().map((s) => s.weight)).toEqual([50, 1]);
  });

  it("a weight for a URL that is not an upstream is refused by path", () => {
    const dir = mkdtempSync(join(tmpdir(), "weights-"));
    const file = join(dir, "gateway.json");
    writeFileSync(
      file,
      JSON.stringify({ networks: { testnet: { upstreams: ["http://a.example:8545"], weights: [{ url: "http://b.example:8545", weight: 2 }] } } }),
    );
    expect(() => loadConfig({ CONFIG_FILE: file })).toThrow(/networks\.testnet\.weights: "http:\/\/b\.example:8545" is not one of its upstreams/);
  });
});
