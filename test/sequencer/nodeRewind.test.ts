// A node that forgets blocks or comes back as another chain, behind a running gateway, with real processes:
// an anvil that dumps its state each second is killed with SIGKILL under ZKT load and restarted on that
// state (its head goes back); then a fresh anvil (new genesis) takes the same port.
import { afterAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { batchRpc, freePort, kill9, nextDump, startAnvil, unminedAfter, whyUnmined } from "../helpers/anvilProcess.js";
import type { Gateway } from "../../src/gateway.js";
import type { GatewayConfig } from "../../src/config/config.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";
import type { SubmissionStore } from "../../src/store/submissionStore.js";

describe("a node that forgets blocks", () => {
  const children: ChildProcess[] = [];
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
    await Promise.all(children.map(kill9));
  });
  /** A new anvil on a free port, and a new gateway in front of it (the previous one closed). */
  const gatewayOnFreshAnvil = async (mutate?: (c: GatewayConfig) => void): Promise<{ url: string; port: number }> => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    children.push(await startAnvil(port));
    await gw?.close();
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [url];
        c.upstreamTimeoutMs = 1_000;
        c.upstreamProbeIntervalMs = 200;
        mutate?.(c);
      },
    });
    return { url, port };
  };

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
    // Killed between two dumps, two blocks after the last one: the node surely comes back behind the block read
    // here. (Killed just after a dump, it came back with every block: seen in CI.)
    let headBefore = 0;
    for (let tries = 1; ; tries++) {
      const dumpedAt = await nextDump(state);
      const atDump = Number(await rpc<string>(url, "eth_blockNumber"));
      do {
        await new Promise((r) => setTimeout(r, 20));
        headBefore = Number(await rpc<string>(url, "eth_blockNumber"));
      } while (headBefore < atDump + 2);
      if (Date.now() - dumpedAt < 800 || tries === 5) break; // else the next dump is near: wait for it and try again
    }
    const { hash: hashBefore } = await rpc<{ hash: string }>(url, "eth_getBlockByNumber", [`0x${headBefore.toString(16)}`, false]);
    await kill9(children[0]!);
    await new Promise((r) => setTimeout(r, 300));
    children.push(await startAnvil(port, state));
    const headAfter = Number(await rpc<string>(url, "eth_blockNumber"));
    const signers = [gw.publicSignerAddress, ...keys.map((k) => k.info.walletAddress)];
    // anvil's periodic dump is not atomic: under load its account state can be a block or more ahead of the
    // blocks it kept, so the restarted node has nonces used while their transactions are nowhere. The gateway
    // signs those writes again at new nonces (same queueId, new hash). Measured here, on the restarted node.
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
    // The node did forget blocks: the head read before the kill is not on its chain. (Compared by hash, as the
    // restarted node may mine past that height again before its head is read.)
    expect(await rpc<unknown>(url, "eth_getBlockByHash", [hashBefore, false])).toBeNull();
    expect(acknowledged.length).toBeGreaterThan(100);

    // Every acknowledged write (by queueId) ends up completed, its journaled hash on the chain the node now has,
    // within two minutes.
    const store = (gw.network("testnet").sequencer as unknown as { options: { store: SubmissionStore } }).options.store;
    const ids = acknowledged.map((h) => queueIds.get(h)!);
    const unmined = await unminedAfter(store, url, ids);
    const finals = await Promise.all(ids.map((id) => store.get(id)));
    const moved = finals.filter((r, i) => r!.hash !== acknowledged[i]).length;
    const lostTotal = [...nodeLost.values()].reduce((a, l) => a + l.to - l.from, 0);
    const why = unmined.length > 0 ? await whyUnmined(url, unmined, finals).catch((e: unknown) => `\n(the node did not answer the detail: ${String(e)})`) : "";
    expect(unmined, `${unmined.length} of ${ids.length} acknowledged writes not mined (node-lost nonces: ${lostTotal}, moved: ${moved})${why}`).toEqual([]);
    // Moved writes answer the status route with their new hash.
    const sample = finals.find((r, i) => r!.hash !== acknowledged[i]) ?? finals[0]!;
    const status = (await (await fetch(`${base}/zkt/transactions/${sample!.queueId}`)).json()) as { status: string; transactionHash: string };
    expect(status).toMatchObject({ status: "completed", transactionHash: sample!.hash });
    // No duplicate and no gap: each signer's nonces 0..n-1 hold exactly one acknowledged write each, or are a
    // nonce the node itself spent without a transaction; no write is on the chain twice (old and new hash).
    const txs = (await batchRpc<{ from: string; nonce: string }>(
      url,
      "eth_getTransactionByHash",
      finals.map((r) => [r!.hash]),
    )) as { from: string; nonce: string }[];
    const oldOnChain = await batchRpc<unknown>(
      url,
      "eth_getTransactionByHash",
      finals.filter((r, i) => r!.hash !== acknowledged[i]).map((r) => [acknowledged[ids.indexOf(r!.queueId)]]),
    );
    expect(oldOnChain.filter((t) => t !== null)).toEqual([]);
    for (const signer of signers) {
      const nonces = txs
        .filter((t) => t.from.toLowerCase() === signer.toLowerCase())
        .map((t) => Number(t.nonce))
        .sort((a, b) => a - b);
      expect(new Set(nonces).size).toBe(nonces.length);
      const mined = Number(await rpc<string>(url, "eth_getTransactionCount", [signer, "latest"]));
      const lost = nodeLost.get(signer.toLowerCase());
      expect(mined).toBe(nonces.length + (lost ? lost.to - lost.from : 0));
    }
  }, 180_000);

  it("a write the node lost reads processing, saying why, until it is mined again (#52)", async () => {
    const { url } = await gatewayOnFreshAnvil((c) => {
      c.networks[0]!.blockTimeSeconds = 0.25;
    });
    const base = gw!.network("testnet").url;
    const snapshot = await rpc<string>(url, "evm_snapshot");
    const w = (await postJson(`${base}/zkt/try-it-out`, { arguments: "lost once" })).json as { queueId: string };
    const statusOf = async () =>
      (await (await fetch(`${base}/zkt/transactions/${w.queueId}`)).json()) as { status: string; statusReason: string | null; processedAt: string | null };
    await expect.poll(async () => (await statusOf()).status, { timeout: 15_000 }).toBe("completed");
    expect((await statusOf()).statusReason).toBeNull();

    // The node stops mining and goes back to before the write: the write is sent again and waits in its pool.
    await rpc(url, "evm_setIntervalMining", [0]);
    expect(await rpc<boolean>(url, "evm_revert", [snapshot])).toBe(true);
    await expect.poll(async () => (await statusOf()).status, { timeout: 15_000 }).toBe("processing");
    const reopened = await statusOf();
    expect(reopened.statusReason).toMatch(/no longer holds the block/);
    expect(reopened.processedAt).toBeNull();

    await rpc(url, "evm_setIntervalMining", [1]);
    await expect.poll(async () => (await statusOf()).status, { timeout: 15_000 }).toBe("completed");
    expect((await statusOf()).statusReason).toBeNull();
  }, 60_000);

  it("a node that lost blocks but kept their nonces (what anvil's non-atomic dump leaves): those writes are signed again at new nonces", async () => {
    // Made on purpose rather than waited for (the dump race above shows up in about one run of five): the
    // node goes back to a snapshot (blocks and state) and is then set to the nonce it had, as a restart on a
    // dump whose state was written after its blocks leaves it.
    const { url } = await gatewayOnFreshAnvil((c) => {
      c.networks[0]!.blockTimeSeconds = 0.25;
    });
    const base = gw!.network("testnet").url;
    const signer = gw!.publicSignerAddress;
    const before = (await postJson(`${base}/zkt/try-it-out`, { arguments: "before the snapshot" })).json as { hash: string };
    await expect.poll(() => rpc<{ blockNumber: string | null } | null>(url, "eth_getTransactionReceipt", [before.hash]), { timeout: 10_000 }).toBeTruthy();
    const snapshot = await rpc<string>(url, "evm_snapshot");
    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => postJson(`${base}/zkt/try-it-out`, { arguments: `lost ${i}` })));
    const writes = sent.map((r) => r.json as { hash: string; queueId: string });
    const statusOf = async (id: string) => (await (await fetch(`${base}/zkt/transactions/${id}`)).json()) as { status: string; transactionHash: string };
    for (const w of writes) await expect.poll(async () => (await statusOf(w.queueId)).status, { timeout: 15_000 }).toBe("completed");
    const spent = await rpc<string>(url, "eth_getTransactionCount", [signer, "latest"]);

    expect(await rpc<boolean>(url, "evm_revert", [snapshot])).toBe(true);
    await rpc(url, "anvil_setNonce", [signer, spent]);
    expect(await rpc<unknown>(url, "eth_getTransactionByHash", [writes[0]!.hash])).toBeNull();

    // Every write is completed again, under a new hash the node has; the old hashes never come back.
    for (const w of writes) {
      await expect
        .poll(
          async () => {
            const s = await statusOf(w.queueId);
            const tx = await rpc<{ blockNumber: string | null } | null>(url, "eth_getTransactionByHash", [s.transactionHash]);
            return s.status === "completed" && s.transactionHash !== w.hash && tx?.blockNumber != null;
          },
          { timeout: 30_000 },
        )
        .toBe(true);
    }
    const finals = await Promise.all(writes.map((w) => statusOf(w.queueId)));
    const nonces = await Promise.all(
      finals.map(async (s) => Number((await rpc<{ nonce: string }>(url, "eth_getTransactionByHash", [s.transactionHash])).nonce)),
    );
    expect(new Set(nonces).size).toBe(writes.length);
    expect(Math.min(...nonces)).toBe(Number(spent)); // moved past the spent nonces, no gap
    expect(Number(await rpc<string>(url, "eth_getTransactionCount", [signer, "latest"]))).toBe(Number(spent) + writes.length);
    for (const w of writes) expect(await rpc<unknown>(url, "eth_getTransactionByHash", [w.hash])).toBeNull();
  }, 90_000);

  it("a fresh chain behind the running gateway: readiness false, writes answered 503, the journal kept", async () => {
    const { url, port } = await gatewayOnFreshAnvil();
    const base = gw!.network("testnet").url;
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
