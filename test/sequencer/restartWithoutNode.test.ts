// A gateway restarted while its node is down (#52): node killed under ZKT load, gateway killed with SIGKILL,
// gateway started again while the node is still down, node back. Every queueId acknowledged before answers
// at once (the journal is keyed by the pinned genesis, not by a placeholder while no node answers), and every
// acknowledged write is mined once when the node is back.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { batchRpc, freePort, inBatches, kill9, saveState, startAnvil } from "../helpers/anvilProcess.js";
import { postJson } from "../helpers/gateway.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";

describe("a gateway restarted while its node is down", () => {
  const children: ChildProcess[] = [];
  const gateways: GatewayProcess[] = [];
  afterAll(async () => {
    await Promise.all([...gateways.map((g) => g.child), ...children].map(kill9));
  });

  it("keeps every queueId and sends every acknowledged write once the node is back", { timeout: 180_000 }, async () => {
    const port = await freePort();
    const node = `http://127.0.0.1:${port}`;
    const dir = mkdtempSync(join(tmpdir(), "no-node-"));
    children.push(await startAnvil(port));
    const env = {
      DATA_DIR: join(dir, "data"),
      TESTNET_UPSTREAMS: node,
      UPSTREAM_TIMEOUT_MS: "1000",
      STUCK_TRANSACTION_MS: "3000",
      RATE_LIMIT: "1000000",
      TRY_IT_OUT_RATE_LIMIT: "1000000",
    };
    let gw = await startGatewayProcess(env);
    gateways.push(gw);
    const acknowledged = new Map<string, string>(); // queueId → hash
    let stop = false;
    let n = 0;
    const client = async (): Promise<void> => {
      while (!stop) {
        const res = await postJson(gw.url + "/zkt/try-it-out", { arguments: `no node ${n++}` }).catch(() => undefined);
        if (res?.status === 200) {
          const { hash, queueId } = res.json as { hash: string; queueId: string };
          acknowledged.set(queueId, hash);
        } else await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all(Array.from({ length: 4 }, client));
    await new Promise((r) => setTimeout(r, 2_000));
    // The node goes down (its state kept, to come back on), and the gateway is killed while it is down.
    const state = join(dir, "node.json");
    await saveState(node, state);
    await kill9(children[0]!);
    await new Promise((r) => setTimeout(r, 1_500));
    stop = true;
    await load;
    await kill9(gw.child);
    expect(acknowledged.size).toBeGreaterThan(50);

    // Started again with no node to ask which chain it journals for.
    gw = await startGatewayProcess(env);
    gateways.push(gw);
    const ids = [...acknowledged.keys()];
    const statuses = await inBatches(ids, async (id) => (await fetch(`${gw.url}/zkt/transactions/${id}`)).status);
    expect(statuses.filter((s) => s !== 200).length, "queueIds that no longer answer").toBe(0);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(503);

    children.push(await startAnvil(port, undefined, undefined, state));
    const deadline = Date.now() + 120_000;
    let unmined = ids;
    while (unmined.length > 0 && Date.now() < deadline) {
      const now = await inBatches(
        unmined,
        async (id) => (await (await fetch(`${gw.url}/zkt/transactions/${id}`)).json()) as { status: string; transactionHash: string },
      );
      const found = await batchRpc<{ blockNumber: string | null } | null>(
        node,
        "eth_getTransactionByHash",
        now.map((s) => [s.transactionHash]),
      );
      unmined = unmined.filter((_, i) => !found[i]?.blockNumber || now[i]!.status !== "completed");
      if (unmined.length > 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(unmined.length, `${unmined.length} of ${ids.length} acknowledged writes not mined`).toBe(0);
  });
});
