// The admin API (#54) over real transports: 404 without ADMIN_TOKEN, 401 without or with a wrong token; with
// the right one, keys are issued, limited and revoked (a revoked key fails on every path at once), a cordoned
// node gets no reads, and a write a node never mines is cancelled (its nonce filled, the signer's later write
// mined). Two proxies in front of one anvil stand in for two nodes; one of them can lose a transaction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { WebSocket } from "ws";
import { toJsonString } from "@bufbuild/protobuf";
import { AdminService, ListKeysResponseSchema } from "../../gen/chaingateway/admin/v1/admin_pb.js";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { startGateway, type Gateway } from "../../src/gateway.js";
import { createLogger } from "../../src/log/logger.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { startFaultyUpstream, type FaultyUpstream } from "../helpers/faultyUpstream.js";
import { LOG_FILE, postJson, recordGatewaySeed, startTestGateway, testConfig } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

const TOKEN = "ops-token-0123456789abcdefghijklmnop";

const bearer =
  (token: string | undefined): Interceptor =>
  (next) =>
  (req) => {
    if (token !== undefined) req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };

const adminOver = (transport: (i: Interceptor[]) => Transport, token?: string) => createClient(AdminService, transport([bearer(token)]));

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("admin API: not served without ADMIN_TOKEN", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("answers 404", async () => {
    const res = await postJson(gw.network("testnet").url + "/chaingateway.admin.v1.AdminService/ListKeys", {}, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(404);
  });
});

describe("admin API with ADMIN_TOKEN", () => {
  const children: ChildProcess[] = [];
  const lines: string[] = [];
  let a: FaultyUpstream;
  let b: FaultyUpstream;
  let gw: Gateway;
  let url: string;
  const connect = (interceptors: Interceptor[]) => createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors });
  const grpc = (interceptors: Interceptor[]) => createGrpcTransport({ baseUrl: url, interceptors });

  beforeAll(async () => {
    const port = await freePort();
    children.push(await startAnvil(port));
    const node = `http://127.0.0.1:${port}`;
    [a, b] = await Promise.all([startFaultyUpstream(node), startFaultyUpstream(node)]);
    const config = testConfig({
      mutate: (c) => {
        c.networks[0]!.upstreams = [a.url, b.url];
        c.networks[0]!.blockTimeSeconds = 0.25;
        c.upstreamProbeIntervalMs = 200;
        c.upstreamTimeoutMs = 2_000;
        // The gateway's own resend must not rescue the lost write before the operator cancels it.
        c.stuckTransactionMs = 600_000;
        c.adminTokens = [`alice:${TOKEN}`];
        c.coalesceReads = false;
      },
    });
    mkdirSync("test-artifacts", { recursive: true });
    const log = createLogger("debug", {}, (line) => {
      lines.push(line);
      appendFileSync(LOG_FILE, line);
    });
    gw = await startGateway(config, { log });
    recordGatewaySeed(config);
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
    a?.close();
    b?.close();
    await Promise.all(children.map(kill9));
  });

  it("refuses a call without a token or with a wrong one (401 unauthenticated), on Connect and gRPC", async () => {
    for (const transport of [connect, grpc]) {
      expect((await failure(adminOver(transport).listKeys({}))).code).toBe(Code.Unauthenticated);
      expect((await failure(adminOver(transport, "not-the-token-0123456789abcdef").listKeys({}))).code).toBe(Code.Unauthenticated);
      // A customer's API key is not an admin token.
      const { apiKey } = await gw.keys.create();
      expect((await failure(adminOver(transport, apiKey).listKeys({}))).code).toBe(Code.Unauthenticated);
    }
    const res = await postJson(url + "/chaingateway.admin.v1.AdminService/ListKeys", {}, { authorization: "Bearer wrong-token-0123456789abcdef" });
    expect(res.status).toBe(401);
  });

  it("issues a key, lists it without the secret, limits it, and a revoke fails it on every path at once", async () => {
    const admin = adminOver(connect, TOKEN);
    const created = await admin.createKey({ label: "partner", limits: { writesPerDay: 1 } });
    expect(created.apiKey).toMatch(/^cgw_/);
    const key = created.apiKey;
    const listed = await admin.listKeys({ prefix: created.key!.prefix });
    expect(listed.keys.map((k) => k.id)).toEqual([created.key!.id]);
    expect(toJsonString(ListKeysResponseSchema, listed)).not.toContain(key);
    expect(listed.keys[0]).toMatchObject({ label: "partner", wallet: expect.stringMatching(/^0x/), limits: { writesPerDay: 1 } });

    // Its daily quota of one write, set at issue.
    expect((await postJson(url + `/zkt/${key}`, { arguments: "first" })).status).toBe(200);
    const second = await postJson(url + `/zkt/${key}`, { arguments: "second" });
    expect(second.status).toBe(429);
    expect(second.json).toMatchObject({ errorCode: "QUOTA_EXCEEDED" });
    // Raised, and limited to one receiver: the next write is taken, a write elsewhere is forbidden.
    const target = "0x000000000000000000000000000000000000bEEF";
    const limited = await admin.setKeyLimits({ id: created.key!.id, limits: { writesPerDay: 10, writesPerMonth: 100, allowedTargets: [target] } });
    expect(limited.key!.limits).toMatchObject({ writesPerDay: 10, writesPerMonth: 100, allowedTargets: [target.toLowerCase()] });
    const elsewhere = await postJson(url + `/zkt/${key}`, { arguments: "elsewhere" });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json).toMatchObject({ errorCode: "FORBIDDEN_TARGET" });
    const usage = await fetch(url + `/zgt/${key}/usage`).then((r) => r.json() as Promise<{ limits: { writesPerMonth: number } }>);
    expect(usage.limits.writesPerMonth).toBe(100);

    // Revoked: every path refuses it at once.
    const ws = new WebSocket(url.replace("http://", "ws://") + `/zgt/${key}`);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const revoked = await admin.revokeKey({ id: created.key!.id });
    expect(revoked.key!.revokedAt).not.toBe("");
    const call = { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] };
    expect((await postJson(url + `/zgt/${key}`, call)).status).toBe(401);
    expect((await postJson(url + `/zkt/${key}`, { arguments: "after" })).status).toBe(401);
    expect((await fetch(url + `/zgt/${key}/usage`)).status).toBe(401);
    const rpcClient = createClient(RpcService, connect([bearer(key)]));
    expect((await failure(rpcClient.getBlockNumber({}))).code).toBe(Code.Unauthenticated);
    const answer = new Promise<unknown>((resolve) => ws.once("message", (d) => resolve(JSON.parse(String(d)))));
    ws.send(JSON.stringify(call));
    expect(await answer).toMatchObject({ id: 1, error: { code: -32001 } });
    ws.close();

    // Each change is in the audit log, with the token's name; neither the token nor the key is in any line.
    const audit = lines.filter((l) => l.includes('"admin action"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.map((l) => l.action)).toEqual(expect.arrayContaining(["CreateKey", "SetKeyLimits", "RevokeKey"]));
    expect(audit.every((l) => l.admin === "alice")).toBe(true);
    expect(lines.some((l) => l.includes(TOKEN) || l.includes(key))).toBe(false);
  });

  it("lists the nodes, and a cordoned node gets no reads until it is uncordoned", async () => {
    const admin = adminOver(grpc, TOKEN);
    const { upstreams } = await admin.listUpstreams({});
    expect(upstreams.map((u) => u.url).sort()).toEqual([a.url, b.url].map((u) => new URL(u).origin).sort());
    expect(upstreams.every((u) => u.healthy && !u.cordoned)).toBe(true);

    const cordoned = await admin.cordonUpstream({ url: upstreams[0]!.url });
    expect(cordoned.upstream!.cordoned).toBe(true);
    const [out, stays] = new URL(a.url).origin === upstreams[0]!.url ? [a, b] : [b, a];
    out.slow(0, /eth_getBalance/);
    stays.slow(0, /eth_getBalance/);
    for (let i = 0; i < 20; i++) {
      const addr = "0x" + (i + 1).toString(16).padStart(40, "0");
      const res = await postJson(url, { jsonrpc: "2.0", id: i, method: "eth_getBalance", params: [addr, "latest"] });
      expect(res.json).toMatchObject({ result: "0x0" });
    }
    expect(out.matched).toBe(0);
    expect(stays.matched).toBe(20);
    // The last node in service is not cordoned.
    expect((await failure(admin.cordonUpstream({ url: upstreams[1]!.url }))).code).toBe(Code.FailedPrecondition);
    expect((await admin.uncordonUpstream({ url: upstreams[0]!.url })).upstream!.cordoned).toBe(false);
    expect((await failure(admin.cordonUpstream({ url: "http://10.9.9.9:1" }))).code).toBe(Code.NotFound);
  });

  it("cancels a write the node never mines: it ends as error, a no-op takes its nonce, the signer's next write is mined", { timeout: 60_000 }, async () => {
    const admin = adminOver(connect, TOKEN);
    const { apiKey } = await gw.keys.create();
    // Both "nodes" lose the next transaction: the gateway was told it was taken, the chain never sees it.
    a.lose(1);
    b.lose(1);
    const lost = (await postJson(url + `/zkt/${apiKey}`, { arguments: "never mined" })).json as { queueId: string; hash: string };
    const behind = (await postJson(url + `/zkt/${apiKey}`, { arguments: "waits behind it" })).json as { queueId: string };
    await new Promise((r) => setTimeout(r, 1_500));
    const status = async (queueId: string) => (await fetch(url + `/zkt/transactions/${queueId}`).then((r) => r.json())) as { status: string; error?: string };
    expect((await status(behind.queueId)).status).toBe("processing");

    const { signers } = await admin.listStuckWrites({ olderThanSeconds: 1 });
    const lane = signers.find((s) => s.writes.some((w) => w.queueId === lost.queueId));
    expect(lane?.writes.map((w) => w.queueId)).toEqual([lost.queueId, behind.queueId]);
    expect(Number(lane!.writes[1]!.nonce)).toBe(Number(lane!.writes[0]!.nonce) + 1);

    const cancelled = await admin.cancelWrite({ queueId: lost.queueId });
    expect(cancelled.write!.status).toBe("error");
    expect(cancelled.fillerHash).toMatch(/^0x[0-9a-f]{64}$/);
    await until(async () => (await status(behind.queueId)).status === "completed", 20_000);
    const after = await status(lost.queueId);
    expect(after.status).toBe("error");
    expect(JSON.stringify(after)).toMatch(/cancelled by the operator \(alice\)/);
    // Neither is stuck any more; a second cancel is refused.
    const again = await admin.listStuckWrites({ olderThanSeconds: 1 });
    expect(again.signers.flatMap((s) => s.writes.map((w) => w.queueId))).not.toContain(lost.queueId);
    expect((await failure(admin.cancelWrite({ queueId: lost.queueId }))).code).toBe(Code.FailedPrecondition);
    expect((await failure(admin.resendWrite({ queueId: "nope" }))).code).toBe(Code.NotFound);
    expect(lines.some((l) => l.includes('"action":"CancelWrite"'))).toBe(true);
  });
});

describe("admin API: wrong tokens have a budget of their own (#62)", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.adminTokens = [`alice:${TOKEN}`]) });
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("2,000 wrong admin tokens from one IP: 401, then 429 for admin calls only; the IP's JSON-RPC goes on within its limit", { timeout: 60_000 }, async () => {
    const { Agent, request } = await import("undici");
    const attacker = new Agent({ localAddress: "127.0.0.7", connections: 32 });
    try {
      const post = async (path: string, body: string, headers: Record<string, string>) => {
        const res = await request(url + path, { method: "POST", body, headers: { "content-type": "application/json", ...headers }, dispatcher: attacker });
        return { status: res.statusCode, text: await res.body.text() };
      };
      const statuses = new Map<number, number>();
      for (let round = 0; round < 20; round++) {
        const batch = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            post("/chaingateway.admin.v1.AdminService/ListKeys", "{}", { authorization: `Bearer wrong-token-${round}-${i}-0123456789abcdef` }),
          ),
        );
        for (const r of batch) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      expect(statuses.get(401)).toBe(120);
      expect(statuses.get(429)).toBe(1_880);
      // The same address's JSON-RPC: its own limit (1,500 a minute) untouched by the flood.
      for (let i = 0; i < 50; i++) {
        const r = await post("/", JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_blockNumber", params: [] }), {});
        expect(r.status, r.text).toBe(200);
        expect(JSON.parse(r.text).result).toMatch(/^0x/);
      }
      // The operator from another address is not locked out.
      const admin = createClient(AdminService, createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors: [bearer(TOKEN)] }));
      expect((await admin.listKeys({})).keys).toBeDefined();
    } finally {
      await attacker.close();
    }
  });
});
