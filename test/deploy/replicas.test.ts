// compose.yaml's topology as processes (#53): two gateway replicas on one PostgreSQL and Redis, behind nginx
// (deploy/nginx.conf with local addresses), in front of one node. One replica is killed with SIGKILL under ZKT
// load: JSON-RPC through the load balancer keeps answering (errors only while nginx notices, counted), and
// every acknowledged write is mined once. Skipped where nginx is not installed (.ci/run installs it).
import { afterAll, describe, expect, it } from "vitest";
import { batchRpc, inBatches, kill9 } from "../helpers/anvilProcess.js";
import { postJson } from "../helpers/gateway.js";
import { NGINX } from "../helpers/nginx.js";
import { type Replicas, startReplicas } from "../helpers/replicas.js";
import { until } from "../helpers/until.js";

describe.skipIf(!NGINX)("two replicas behind nginx", () => {
  let replicas: Replicas | undefined;
  afterAll(() => replicas?.stop());

  it("one replica killed under load: reads keep answering, every acknowledged write is mined once", { timeout: 180_000 }, async () => {
    replicas = await startReplicas("replicas-", { RATE_LIMIT: "1000000", TRY_IT_OUT_RATE_LIMIT: "1000000", STUCK_TRANSACTION_MS: "3000" });
    const { node, gateways } = replicas;
    const lb = replicas.lb.url;

    const acknowledged = new Map<string, string>();
    let stop = false;
    let n = 0;
    const writer = async (): Promise<void> => {
      while (!stop) {
        const res = await postJson(lb + "/zkt/try-it-out", { arguments: `replica ${n++}` }).catch(() => undefined);
        if (res?.status === 200) {
          const { queueId, hash } = res.json as { queueId: string; hash: string };
          acknowledged.set(queueId, hash);
        } else await new Promise((r) => setTimeout(r, 20));
      }
    };
    const reads = { ok: 0, failed: 0, failedAfterKill: [] as number[] };
    let killedAt = 0;
    const reader = async (): Promise<void> => {
      while (!stop) {
        const res = await postJson(lb, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }).catch(() => undefined);
        if (res?.status === 200 && typeof (res.json as { result?: unknown }).result === "string") reads.ok++;
        else {
          reads.failed++;
          if (killedAt) reads.failedAfterKill.push(Date.now() - killedAt);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const load = Promise.all([writer(), writer(), writer(), writer(), reader(), reader()]);
    await new Promise((r) => setTimeout(r, 2_000));
    killedAt = Date.now();
    await kill9(gateways[0]!.child);
    await new Promise((r) => setTimeout(r, 4_000));
    stop = true;
    await load;

    // Reads went on: errors (if any) only while nginx noticed the dead replica, then none.
    expect(reads.ok).toBeGreaterThan(100);
    expect(
      reads.failedAfterKill.filter((ms) => ms > 1_000),
      `read failures after the kill, ms after it: ${reads.failedAfterKill.join(", ")}`,
    ).toEqual([]);
    expect(acknowledged.size).toBeGreaterThan(50);
    // Every acknowledged write on chain, once: the surviving replica sends what the dead one journaled.
    const hashes = async () => {
      return inBatches(
        [...acknowledged.keys()],
        async (id) => ((await (await fetch(`${lb}/zkt/transactions/${id}`)).json()) as { transactionHash: string }).transactionHash,
      );
    };
    let unmined: string[] = [];
    await until(async () => {
      const now = await hashes();
      const found = await batchRpc<{ blockNumber: string | null } | null>(
        node,
        "eth_getTransactionByHash",
        now.map((h) => [h]),
      );
      unmined = now.filter((_, i) => !found[i]?.blockNumber);
      return unmined.length === 0;
    }, 90_000).catch(() => undefined);
    expect(unmined.length, `${unmined.length} of ${acknowledged.size} acknowledged writes not mined; read failures ${reads.failed}`).toBe(0);
  });
});
