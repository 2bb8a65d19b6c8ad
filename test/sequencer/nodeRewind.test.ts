// A node that forgets blocks or comes back as another chain, behind a running gateway, with real processes:
// an anvil that dumps its state each second is killed with SIGKILL under ZKT load and restarted on that
// state (its head goes back); then a fresh anvil (new genesis) takes the same port.
import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anvilBinaryPath } from "../../src/chain/embeddedNode.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import type { SubmissionStore } from "../../src/store/submissionStore.js";

const CHAIN_ID = 20180427;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: T }).result;
}

/**
 * anvil on a fixed port; with `state`, loaded from and dumped to that file every second. Its genesis hash
 * depends on its start second: `genesisTimestamp` makes two fresh nodes surely differ.
 */
async function startAnvil(port: number, state?: string, genesisTimestamp?: number): Promise<ChildProcess> {
  const args = [
    ...(genesisTimestamp ? ["--timestamp", String(genesisTimestamp)] : []),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--chain-id",
    String(CHAIN_ID),
    "--block-time",
    "0.25",
    "--gas-price",
    "0",
    "--base-fee",
    "0",
    "--quiet",
  ];
  if (state) args.push("--state", state, "--state-interval", "1");
  const child = spawn(anvilBinaryPath(), args, { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await rpc<string>(url, "eth_chainId")) !== undefined) return child;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error("anvil did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

describe("a node that forgets blocks", () => {
  const children: ChildProcess[] = [];
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await Promise.all(children.map(kill9));
  });

  it("kill -9 and restart on its last state dump: every acknowledged write is mined once, no gap, within two minutes", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const state = join(mkdtempSync(join(tmpdir(), "anvil-state-")), "state.json");
    children.push(await startAnvil(port, state));
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [url];
        c.networks[0]!.blockTimeSeconds = 0.25;
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 250;
        c.stuckTransactionMs = 5_000;
        c.rateLimit.requestsPerWindow = 1_000_000;
        c.rateLimit.tryItOutRequestsPerWindow = 1_000_000;
      },
    });
    const base = gw.network("testnet").url;
    const keys = await Promise.all(Array.from({ length: 3 }, () => gw!.keys.create()));
    const paths = ["/zkt/try-it-out", ...keys.map((k) => `/zkt/${k.apiKey}`)];
    const acknowledged: string[] = [];
    const queueIds = new Map<string, string>();
    let stop = false;
    let n = 0;
    const client = async (path: string): Promise<void> => {
      while (!stop) {
        const res = await postJson(base + path, { arguments: `write ${n++}` }).catch(() => undefined);
        if (res?.status === 200) {
          const { hash, queueId } = res.json as { hash: string; queueId: string };
          acknowledged.push(hash);
          queueIds.set(hash, queueId);
        } else await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all(paths.flatMap((p) => [client(p), client(p), client(p)]));
    // Long enough for several state dumps, so the restart comes back a few blocks behind, not at genesis.
    await new Promise((r) => setTimeout(r, 2_500));
    const headBefore = Number(await rpc<string>(url, "eth_blockNumber"));
    await kill9(children[0]!);
    await new Promise((r) => setTimeout(r, 300));
    children.push(await startAnvil(port, state));
    const headAfter = Number(await rpc<string>(url, "eth_blockNumber"));
    const signers = [gw.publicSignerAddress, ...keys.map((k) => k.info.walletAddress)];
    // anvil's periodic dump is not atomic: under load its account state can be a block or more ahead of the
    // blocks it kept, so the restarted node has those nonces used while their transactions are nowhere. Those
    // writes were executed and then lost by the node itself; the gateway cannot bring back their hashes (a
    // re-signed copy would run them twice). Measured here, on the restarted node at its restored head.
    const nodeLost = new Map<string, { from: number; to: number }>();
    {
      const inBlocks = new Map<string, number>();
      for (let b = 0; b <= headAfter; b++) {
        const block = await rpc<{ transactions: { from: string }[] }>(url, "eth_getBlockByNumber", [`0x${b.toString(16)}`, true]);
        for (const t of block.transactions) inBlocks.set(t.from.toLowerCase(), (inBlocks.get(t.from.toLowerCase()) ?? 0) + 1);
      }
      for (const signer of signers) {
        const stateNonce = Number(await rpc<string>(url, "eth_getTransactionCount", [signer, `0x${headAfter.toString(16)}`]));
        const kept = inBlocks.get(signer.toLowerCase()) ?? 0;
        if (stateNonce > kept) nodeLost.set(signer.toLowerCase(), { from: kept, to: stateNonce });
      }
    }
    await new Promise((r) => setTimeout(r, 1_500));
    stop = true;
    await load;
    expect(headAfter).toBeLessThan(headBefore); // the node did forget blocks
    expect(acknowledged.length).toBeGreaterThan(100);

    // Every acknowledged write ends up on the chain the node now has, within two minutes.
    const store = (gw.network("testnet").sequencer as unknown as { options: { store: SubmissionStore } }).options.store;
    const nodeLostWrite = async (hash: string): Promise<boolean> => {
      const rec = (await store.get(queueIds.get(hash)!))!;
      const lost = nodeLost.get(rec.signer.toLowerCase());
      return lost !== undefined && rec.nonce >= lost.from && rec.nonce < lost.to;
    };
    const deadline = Date.now() + 120_000;
    let missing = acknowledged;
    let notNodeLost = missing;
    while (notNodeLost.length > 0 && Date.now() < deadline) {
      const found = await Promise.all(missing.map((h) => rpc<{ blockNumber: string | null } | null>(url, "eth_getTransactionByHash", [h])));
      missing = missing.filter((_, i) => !found[i]?.blockNumber);
      const lost = await Promise.all(missing.map(nodeLostWrite));
      notNodeLost = missing.filter((_, i) => !lost[i]);
      if (notNodeLost.length > 0) await new Promise((r) => setTimeout(r, 500));
    }
    // Any acknowledged write not on the chain must be one the node itself lost (above); everything else mined.
    expect(
      notNodeLost,
      `${notNodeLost.length} of ${acknowledged.length} acknowledged writes never mined (node-lost: ${missing.length - notNodeLost.length})`,
    ).toEqual([]);
    // No duplicates and no gap: every signer's mined nonce equals its number of journaled writes.
    const txs = await Promise.all(
      acknowledged.filter((h) => !missing.includes(h)).map((h) => rpc<{ from: string; nonce: string }>(url, "eth_getTransactionByHash", [h])),
    );
    for (const signer of signers) {
      const nonces = txs
        .filter((t) => t.from.toLowerCase() === signer.toLowerCase())
        .map((t) => Number(t.nonce))
        .sort((a, b) => a - b);
      expect(new Set(nonces).size).toBe(nonces.length);
      const mined = Number(await rpc<string>(url, "eth_getTransactionCount", [signer, "latest"]));
      const lost = nodeLost.get(signer.toLowerCase());
      expect(mined).toBe(nonces.length + (lost ? lost.to - lost.from : 0)); // nonces 0..n-1: an acknowledged write each, or one the node lost
    }
  }, 180_000);

  it("a fresh chain behind the running gateway: readiness false, writes answered 503, the journal kept", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    children.push(await startAnvil(port));
    await gw?.close();
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [url];
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 200;
      },
    });
    const base = gw.network("testnet").url;
    const first = await postJson(`${base}/zkt/try-it-out`, { arguments: "on the first chain" });
    expect(first.status).toBe(200);
    const queueId = (first.json as { queueId: string }).queueId;
    await expect
      .poll(async () => ((await (await fetch(`${base}/zkt/transactions/${queueId}`)).json()) as { status: string }).status, { timeout: 10_000 })
      .toBe("completed");

    await kill9(children[children.length - 1]!);
    children.push(await startAnvil(port, undefined, Math.floor(Date.now() / 1000) + 3_600)); // same port and chain id, new genesis
    // Not ready, and for the right reason (not merely the moment the old node was gone).
    await expect
      .poll(
        async () => {
          const r = await fetch(`${base}/readyz`);
          return `${r.status} ${await r.text()}`;
        },
        { timeout: 5_000 },
      )
      .toMatch(/^503 .*another chain/);
    const write = await postJson(`${base}/zkt/try-it-out`, { arguments: "must not reach the new chain" });
    expect(write.status).toBe(503);
    expect(write.json).toMatchObject({ success: false, errorCode: "UPSTREAM_UNAVAILABLE" });
    const raw = await postJson(`${base}/`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    expect(raw.status).toBe(503);
    // The journal still holds the first chain's write.
    const status = (await (await fetch(`${base}/zkt/transactions/${queueId}`)).json()) as { status: string; transactionHash: string };
    expect(status).toMatchObject({ status: "completed", transactionHash: (first.json as { hash: string }).hash });
    expect(Number(await rpc<string>(url, "eth_blockNumber"))).toBeGreaterThanOrEqual(0);
    expect(await rpc<unknown>(url, "eth_getTransactionByHash", [(first.json as { hash: string }).hash])).toBeNull();
  }, 60_000);
});
