// API keys end to end, on both stores: self-service issue, per-key wallets, write access on JSON-RPC and
// ZKT, persistence across restarts, revocation on every transport, and no key-length timing leak.
import { afterAll, describe, expect, it } from "vitest";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { JsonRpcProvider, Wallet } from "ethers";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { startGateway } from "../../src/gateway.js";
import { postJson, testConfig, LOG_FILE, recordGatewaySeed } from "../helpers/gateway.js";
import { freshSchemaUrl } from "../helpers/postgres.js";
import { createLogger } from "../../src/log/logger.js";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";

type KeyReply = { apiKey: string; walletAddress: string; id: string; prefix: string; endpoints: Record<string, { jsonRpc: string; zkt: string }> };
const secrets: string[] = [];

async function boot(mutate: (c: ReturnType<typeof testConfig>) => void): Promise<Gateway> {
  mkdirSync("test-artifacts", { recursive: true });
  const config = testConfig({ mutate });
  const gw = await startGateway(config, { log: createLogger("debug", {}, (l) => appendFileSync(LOG_FILE, l)) });
  recordGatewaySeed(config);
  return gw;
}

for (const storeKind of ["embedded", "postgres"] as const) {
  describe(`API keys (${storeKind})`, () => {
    let gw: Gateway;
    let dataDir = "";
    let databaseUrl: string | undefined;
    let dropSchema: (() => Promise<void>) | undefined;
    const setup = (c: ReturnType<typeof testConfig>) => {
      if (dataDir) c.dataDir = dataDir;
      else dataDir = c.dataDir;
      if (databaseUrl) c.databaseUrl = databaseUrl;
    };
    afterAll(async () => {
      await gw?.close();
      await dropSchema?.();
    });

    let first: KeyReply;
    let second: KeyReply;

    it("POST /portal/keys issues keys with wallets of their own; try-it-out keeps the shared signer", async () => {
      if (storeKind === "postgres") {
        const s = await freshSchemaUrl();
        databaseUrl = s.url;
        dropSchema = s.drop;
      }
      gw = await boot(setup);
      const base = gw.network("testnet").url;
      const issue = async (label: string) => {
        const res = await postJson(base + "/portal/keys", { label });
        expect(res.status).toBe(201);
        const k = res.json as KeyReply;
        secrets.push(k.apiKey);
        return k;
      };
      first = await issue("first");
      second = await issue("second");
      expect(first.apiKey).toMatch(/^cgw_[A-Za-z0-9_-]{43}$/);
      expect(first.walletAddress).not.toBe(second.walletAddress);
      expect(first.walletAddress).not.toBe(gw.publicSignerAddress);
      expect(first.endpoints.testnet!.zkt).toBe(`${base}/zkt/${first.apiKey}`);

      const provider = new JsonRpcProvider(gw.network("testnet").upstreamUrls[0], undefined, { staticNetwork: true, pollingInterval: 100 });
      for (const [path, from] of [
        [`/zkt/${first.apiKey}`, first.walletAddress],
        [`/zkt/${second.apiKey}`, second.walletAddress],
        ["/zkt/try-it-out", gw.publicSignerAddress],
      ] as const) {
        const res = await postJson(base + path, { arguments: "signed by " + from });
        expect(res.status).toBe(200);
        const hash = (res.json as { hash: string }).hash;
        await provider.waitForTransaction(hash, 1, 10_000);
        expect((await provider.getTransaction(hash))!.from).toBe(from);
      }
      provider.destroy();
    });

    it("ethers on /zgt/<key> broadcasts a signed transaction; the same on / is refused", async () => {
      const base = gw.network("testnet").url;
      const keyed = new JsonRpcProvider(`${base}/zgt/${first.apiKey}`, undefined, { staticNetwork: true, pollingInterval: 100 });
      const sender = Wallet.createRandom().connect(keyed);
      const tx = await sender.sendTransaction({ to: first.walletAddress, value: 0n, gasPrice: 0n, gasLimit: 21_000n });
      expect((await tx.wait(1, 10_000))?.status).toBe(1);

      const pub = new JsonRpcProvider(base, undefined, { staticNetwork: true });
      const signed = await sender.signTransaction({ to: first.walletAddress, value: 0n, gasPrice: 0n, gasLimit: 21_000n, nonce: 1, chainId: 20180427n });
      await expect(pub.broadcastTransaction(signed)).rejects.toThrow(/needs an API key/);
      keyed.destroy();
      pub.destroy();
    });

    it("after a restart, keys and wallets are the same", async () => {
      await gw.close();
      gw = await boot(setup);
      const base = gw.network("testnet").url;
      const res = await postJson(`${base}/zkt/${first.apiKey}`, { arguments: "after restart" });
      expect(res.status).toBe(200);
      const provider = new JsonRpcProvider(gw.network("testnet").upstreamUrls[0], undefined, { staticNetwork: true, pollingInterval: 100 });
      const hash = (res.json as { hash: string }).hash;
      await provider.waitForTransaction(hash, 1, 10_000);
      expect((await provider.getTransaction(hash))!.from).toBe(first.walletAddress);
      const listed = await gw.keys.list(first.prefix);
      expect(listed.map((k) => k.walletAddress)).toEqual([first.walletAddress]);
      provider.destroy();
    });

    it("the gateway finds its wallets by address after a restart (for refills), revoked keys' included", async () => {
      expect((await gw.keys.walletByAddress(first.walletAddress))?.address).toBe(first.walletAddress);
      expect((await gw.keys.walletByAddress(gw.publicSignerAddress))?.address).toBe(gw.publicSignerAddress);
      expect(await gw.keys.walletByAddress("0x000000000000000000000000000000000000dEaD")).toBeUndefined();
    });

    it("a revoked key answers 401 on every transport at once", async () => {
      const base = gw.network("testnet").url;
      await gw.keys.revoke(second.prefix);
      const rpc = await postJson(`${base}/zgt/${second.apiKey}`, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
      expect(rpc.status).toBe(401);
      expect((rpc.json as { error: { message: string } }).error.message).toMatch(/revoked/);
      const zkt = await postJson(`${base}/zkt/${second.apiKey}`, { arguments: "nope", id: 3 });
      expect(zkt.status).toBe(401);
      expect(zkt.json).toEqual({ success: false, error: "this API key has been revoked", errorCode: "UNAUTHORIZED", id: 3 });
      const headers = { authorization: `Bearer ${second.apiKey}` };
      for (const transport of [createGrpcTransport({ baseUrl: base }), createConnectTransport({ baseUrl: base, httpVersion: "1.1" })]) {
        const err = await createClient(ZktService, transport)
          .writeMessage({ message: "nope" }, { headers })
          .catch((e: unknown) => e as ConnectError);
        expect((err as ConnectError).code).toBe(Code.Unauthenticated);
        const err2 = await createClient(RpcService, transport)
          .getChainId({}, { headers })
          .catch((e: unknown) => e as ConnectError);
        expect((err2 as ConnectError).code).toBe(Code.Unauthenticated);
      }
      // The first key still works over Connect with its bearer token, signing with its own wallet.
      const ok = await createClient(ZktService, createGrpcTransport({ baseUrl: base })).writeMessage(
        { message: "bearer" },
        { headers: { authorization: `Bearer ${first.apiKey}` } },
      );
      expect(ok.hash).toMatch(/^0x/);
    });

    if (storeKind === "embedded") {
      it("a wrong key of the right length answers 401 in the same time as one of another length", async () => {
        const url = gw.network("testnet").url;
        const sameLength = "cgw_" + "A".repeat(43);
        const otherLength = "x";
        const time = async (key: string) => {
          const t = performance.now();
          const res = await fetch(`${url}/zkt/${key}`, { method: "POST", body: '{"arguments":"x"}' });
          await res.text();
          expect(res.status).toBe(401);
          return performance.now() - t;
        };
        for (let i = 0; i < 20; i++) await time(i % 2 ? sameLength : otherLength); // warm up
        const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
        // Both do the same work (hash + one indexed lookup); allow machine noise, not an early exit. A machine
        // busy elsewhere can skew one round: an early exit skews every round, so three tries are allowed.
        let gap = { diff: 0, allowed: 0 };
        for (let round = 0; round < 3; round++) {
          const a: number[] = [];
          const b: number[] = [];
          for (let i = 0; i < 150; i++) {
            a.push(await time(sameLength));
            b.push(await time(otherLength));
          }
          const [ma, mb] = [median(a), median(b)];
          gap = { diff: Math.abs(ma - mb), allowed: Math.max(0.5, 0.3 * Math.min(ma, mb)) };
          if (gap.diff < gap.allowed) break;
        }
        expect(gap.diff).toBeLessThan(gap.allowed);
      });
    }

    it("no key and no wallet secret appears in the server log", () => {
      const log = readFileSync(LOG_FILE, "utf8");
      for (const s of secrets) expect(log).not.toContain(s);
      expect(log).not.toMatch(/cgw_[A-Za-z0-9_-]{43}/);
      const seedPhrase = readFileSync(`${dataDir}/master-seed`, "utf8").trim();
      expect(log).not.toContain(seedPhrase);
      expect(log).not.toContain(seedPhrase.split(" ").slice(0, 4).join(" "));
    });
  });
}
