// Rate limits as callers see them, with a short window instead of a minute (same code path): exact
// counts, per-caller isolation, batches counting n, every transport's refusal, and Redis shared by replicas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { connect, createServer } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import { startGatewayProcess, type GatewayProcess } from "../helpers/gatewayProcess.js";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const call = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] });

async function burst(url: string, total: number, headers: Record<string, string>, concurrency = 16): Promise<{ ok: number; limited: number; other: number }> {
  const counts = { ok: 0, limited: 0, other: 0 };
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const res = await postJson(url, call(next), headers);
        if (res.status === 200) counts.ok++;
        else if (res.status === 429 && (res.json as { error: { code: number } }).error.code === -32005) counts.limited++;
        else counts.other++;
      }
    }),
  );
  return counts;
}

describe("rate limits (in-process)", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit = { ...c.rateLimit, requestsPerWindow: 1500, windowMs: 30_000, tryItOutRequestsPerWindow: 3 };
        c.trustedProxies = ["127.0.0.1"]; // lets the test speak for several client IPs
      },
    });
    url = gw.network("testnet").url + "/";
  });
  afterAll(() => gw?.close());

  it("a caller sending 1600 requests in a window gets 1500 served, the rest 429 -32005 with Retry-After", async () => {
    const counts = await burst(url, 1600, { "x-forwarded-for": "10.0.0.1" });
    expect(counts.other).toBe(0);
    expect(counts.ok).toBeGreaterThanOrEqual(1485);
    expect(counts.ok).toBeLessThanOrEqual(1500);
    expect(counts.ok + counts.limited).toBe(1600);
    const refused = await postJson(url, call(1), { "x-forwarded-for": "10.0.0.1" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((refused.json as { error: { message: string } }).error.message).toMatch(/at most 1500 requests per 30 s/);
  });

  it("free keys from one address share its request units; another address and a raised key are not held (#51)", { timeout: 60_000 }, async () => {
    const from = { "x-forwarded-for": "10.0.0.77" };
    const keys = await Promise.all(
      Array.from({ length: 3 }, async () => ((await postJson(gw.network("testnet").url + "/portal/keys", {}, from)).json as { apiKey: string }).apiKey),
    );
    // 1,200 each is within every key's 1,500; together 3,600 pass the address's 3,000 (twice a key's limit).
    const counts = await Promise.all(keys.map((k) => burst(`${url}zgt/${k}`, 1_200, from)));
    const ok = counts.reduce((a, c) => a + c.ok, 0);
    expect(counts.reduce((a, c) => a + c.other, 0)).toBe(0);
    expect(ok).toBeGreaterThanOrEqual(2_985);
    expect(ok).toBeLessThanOrEqual(3_000);
    const refused = await postJson(`${url}zgt/${keys[0]}`, call(1), from);
    expect((refused.json as { error: { message: string } }).error.message).toMatch(/at most 3000 requests from one address \(across its keys\) per 30 s/);
    // The same key from another address, and an operator's key with its own limit from this one, are served.
    expect((await postJson(`${url}zgt/${keys[0]}`, call(1), { "x-forwarded-for": "10.0.0.78" })).status).toBe(200);
    const raised = await gw.keys.create({ requestsPerMinute: 6_000 });
    expect((await postJson(`${url}zgt/${raised.apiKey}`, call(1), from)).status).toBe(200);
  });

  it("another caller is unaffected, and sees X-RateLimit headers", async () => {
    const res = await postJson(url, call(1), { "x-forwarded-for": "10.0.0.2" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("1500");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("1499");
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
  });

  it("a batch of 40 counts 40, and a batch that would cross the limit is refused whole", async () => {
    const headers = { "x-forwarded-for": "10.0.0.3" };
    const batch = Array.from({ length: 40 }, (_, i) => call(i));
    for (let i = 0; i < 37; i++) expect((await postJson(url, batch, headers)).status).toBe(200); // 1480
    const crossing = await postJson(url, batch, headers);
    expect(crossing.status).toBe(429);
    expect(crossing.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32005 } });
    const fits = await postJson(url, batch.slice(0, 20), headers); // exactly 1500
    expect(fits.status).toBe(200);
    expect(fits.headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await postJson(url, call(1), headers)).status).toBe(429);
  });

  it("malformed requests count too: bad JSON, invalid requests and malformed batch entries use up the limit", async () => {
    const headers = { "x-forwarded-for": "10.0.0.41", "content-type": "application/json" };
    const post = (body: string) => fetch(url, { method: "POST", headers, body });
    const first = await post("{not json");
    expect(first.status).toBe(400);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1499");
    expect((await post('{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}')).headers.get("x-ratelimit-remaining")).toBe("1498");
    // A batch of 38 malformed entries and 2 calls counts 40.
    const mixed = JSON.stringify([...Array.from({ length: 38 }, () => 5), call(1), call(2)]);
    const answered = await post(mixed);
    expect(answered.status).toBe(200);
    expect(answered.headers.get("x-ratelimit-remaining")).toBe("1458");
    const junk = JSON.stringify(Array.from({ length: 40 }, () => ({ bad: true })));
    for (let i = 0; i < 36; i++) expect((await post(junk)).status).toBe(200); // 1458 - 1440 = 18 left
    const refused = await post(junk);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32005 } });
    expect((await post("{not json")).status).toBe(400); // 18 left: still fits, answered as a parse error
    for (let i = 0; i < 17; i++) await post("{not json");
    const over = await post("{not json");
    expect(over.status).toBe(429);
    expect((await postJson(url, call(1), { "x-forwarded-for": "10.0.0.41" })).status).toBe(429);
  });

  it("over WebSocket too: a malformed message counts as a request", async () => {
    const { WebSocket } = await import("ws");
    const ws = new WebSocket(url.replace("http://", "ws://"), { headers: { "x-forwarded-for": "10.0.0.51" } });
    await new Promise((r, j) => ws.once("open", r).once("error", j));
    const answers: { error?: { code: number } }[] = [];
    ws.on("message", (d) => answers.push(JSON.parse(String(d)) as { error?: { code: number } }));
    // The upgrade itself counted one; 1499 bad messages fill the window; the next call is refused.
    for (let i = 0; i < 1499; i++) ws.send("{not json");
    ws.send(JSON.stringify(call(1)));
    await expect.poll(() => answers.length, { timeout: 10_000 }).toBe(1500);
    expect(answers.filter((a) => a.error?.code === -32700)).toHaveLength(1499);
    expect(answers[1499]).toMatchObject({ error: { code: -32005 } });
    ws.close();
  });

  it("requests to no endpoint (404, 405) count against the caller's limit too", async () => {
    const headers = { "x-forwarded-for": "10.0.0.71" };
    const base = gw.network("testnet").url;
    const first = await fetch(`${base}/no/such/path`, { headers });
    expect(first.status).toBe(404);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1499");
    const wrongMethod = await fetch(`${base}/zkt/try-it-out`, { method: "GET", headers });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("x-ratelimit-remaining")).toBe("1498");
    // 1498 more fill the window; then a call is refused, and so is the next unknown path.
    await Promise.all(Array.from({ length: 1498 }, () => fetch(`${base}/nope`, { method: "POST", headers }).then((r) => r.arrayBuffer())));
    expect((await postJson(url, call(1), headers)).status).toBe(429);
    const over = await fetch(`${base}/nope`, { headers });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await over.json()).toMatchObject({ error: expect.stringMatching(/rate limit/i) });
  });

  it("a WebSocket upgrade to no endpoint counts too", async () => {
    const { WebSocket } = await import("ws");
    const base = gw.network("testnet").url;
    const headers = { "x-forwarded-for": "10.0.0.81" };
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base.replace("http://", "ws://")}/nope`, { headers });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("error", () => undefined);
    });
    expect(status).toBe(404);
    const next = await fetch(`${base}/nope`, { headers });
    expect(next.headers.get("x-ratelimit-remaining")).toBe("1498");
  });

  it("X-Forwarded-For from an untrusted peer is ignored", async () => {
    // The gateway trusts 127.0.0.1; a forged chain still resolves to the right-most untrusted hop.
    const res = await postJson(url, call(1), { "x-forwarded-for": "10.0.0.1, 10.0.0.9" });
    expect(res.status).toBe(200);
  });

  it("try-it-out has its own stricter limit; refused submissions send nothing", async () => {
    const zkt = gw.network("testnet").url + "/zkt/try-it-out";
    const nonce = () => gw.network("testnet").pool.call("eth_getTransactionCount", [gw.publicSignerAddress, "pending"]);
    const headers = { "x-forwarded-for": "10.0.0.4" };
    for (let i = 0; i < 3; i++) {
      const res = await postJson(zkt, { arguments: `m${i}` }, headers);
      expect(res.status).toBe(200);
      await gw.network("testnet").sequencer.waitForReceipt((res.json as { hash: string }).hash);
    }
    const before = await nonce();
    const refused = await postJson(zkt, { arguments: "one too many", id: 8 }, headers);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ success: false, errorCode: "RATE_LIMITED", id: 8 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await nonce()).toBe(before);
  });

  it("Connect callers get resource_exhausted", async () => {
    const client = createClient(RpcService, createGrpcTransport({ baseUrl: gw.network("testnet").url }));
    const err = await client.getChainId({}, { headers: { "x-forwarded-for": "10.0.0.1" } }).catch((e: unknown) => e as ConnectError);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    const ok = await client.getChainId({}, { headers: { "x-forwarded-for": "10.0.0.5" } });
    expect(ok.chainIdDecimal).toBe(20180427n);
  });

  it("Connect, gRPC-Web and Connect-proto bodies that fail to parse count too, and a batch counts its calls", async () => {
    // A key of 20 a minute: 10 in this test's 30 s window.
    const { apiKey } = await gw.keys.create({ requestsPerMinute: 20 });
    const base = gw.network("testnet").url;
    const post = (method: string, contentType: string, body: string | Uint8Array<ArrayBuffer>) =>
      fetch(`${base}/chaingateway.rpc.v1.RpcService/${method}`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": contentType },
        body,
      });
    const batch = await post(
      "Batch",
      "application/json",
      JSON.stringify({ calls: [{ method: "eth_chainId" }, { method: "eth_chainId" }, { method: "eth_chainId" }] }),
    );
    expect(batch.status).toBe(200);
    expect(batch.headers.get("x-ratelimit-remaining")).toBe("7");
    // Two Connect JSON bodies that are not JSON, two Connect proto bodies that are not protobuf (a field
    // with a truncated length), two gRPC-Web envelopes of the same: 6 requests, none reaching a handler.
    for (let i = 0; i < 2; i++) expect((await post("GetChainId", "application/json", "{not json")).status).toBe(400);
    // (connect-es answers a protobuf that does not parse as internal, 500, before any code of ours runs.)
    for (let i = 0; i < 2; i++) expect((await post("GetChainId", "application/proto", new Uint8Array([0x0a, 0x7f, 0x01]))).ok).toBe(false);
    const envelope = new Uint8Array([0, 0, 0, 0, 3, 0x0a, 0x7f, 0x01]);
    for (let i = 0; i < 2; i++) {
      const res = await post("GetChainId", "application/grpc-web+proto", envelope);
      await res.arrayBuffer();
      expect(res.headers.get("grpc-status") ?? "").not.toBe("0");
    }
    // 3 + 6 = 9 of 10: one call left, then refused.
    expect((await post("GetChainId", "application/json", "{}")).status).toBe(200);
    const refused = await post("GetChainId", "application/json", "{}");
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "resource_exhausted" });
  });

  it("a Connect caller over its limit is refused before its body is read (a body that never comes is not waited for)", async () => {
    const { apiKey } = await gw.keys.create({ requestsPerMinute: 2 }); // 1 in the window
    const { host, port } = new URL(gw.network("testnet").url);
    const ask = (body: string, declared: number): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(port), host.replace(/:\d+$/, "").replace(/^\[|\]$/g, ""));
        let text = "";
        socket.on("data", (d) => {
          text += String(d);
          if (/\r\n\r\n/.test(text) && /\}\s*$/.test(text)) {
            resolve(text);
            socket.destroy();
          }
        });
        socket.on("error", reject);
        socket.write(
          `POST /chaingateway.rpc.v1.RpcService/GetChainId HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\n` +
            `content-type: application/json\r\ncontent-length: ${declared}\r\n\r\n${body}`,
        );
        setTimeout(() => {
          socket.destroy();
          reject(new Error(`no answer in 3 s: ${JSON.stringify(text)}`));
        }, 3_000).unref();
      });
    expect(await ask("{}", 2)).toMatch(/^HTTP\/1\.1 200/);
    // 100 bytes announced, 1 sent: refused at once, not after the request timeout.
    expect(await ask("{", 100)).toMatch(/^HTTP\/1\.1 429[\s\S]*resource_exhausted/);
  });

  it("a key's own limit and daily transaction quota apply", async () => {
    const { apiKey } = await gw.keys.create({ requestsPerMinute: 1000, transactionsPerDay: 2 });
    const base = gw.network("testnet").url;
    for (let i = 0; i < 2; i++) expect((await postJson(`${base}/zkt/${apiKey}`, { arguments: `q${i}` })).status).toBe(200);
    const third = await postJson(`${base}/zkt/${apiKey}`, { arguments: "q3" });
    expect(third.status).toBe(429);
    expect(third.json).toMatchObject({ errorCode: "QUOTA_EXCEEDED", error: expect.stringMatching(/at most 2 writes \(daily quota\) per day/) });
    // Reads are not transactions.
    const res = await postJson(`${base}/zgt/${apiKey}`, call(1));
    expect(res.headers.get("x-ratelimit-limit")).toBe("500"); // 1000/min over a 30 s window
  });

  it("over gRPC too; a replayed idempotent write is not charged again", async () => {
    const { apiKey } = await gw.keys.create({ requestsPerMinute: 1000, transactionsPerDay: 2 });
    const client = createClient(ZktService, createGrpcTransport({ baseUrl: gw.network("testnet").url }));
    const auth = { headers: { authorization: `Bearer ${apiKey}` } };
    const first = await client.writeMessage({ message: "a", idempotencyKey: "same" }, auth);
    expect((await client.writeMessage({ message: "a", idempotencyKey: "same" }, auth)).hash).toBe(first.hash);
    await client.writeMessage({ message: "b" }, auth);
    const third = await client.writeMessage({ message: "c" }, auth).catch((e: unknown) => e as ConnectError);
    expect((third as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((third as ConnectError).rawMessage).toMatch(/daily quota/);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function startRedis(port: number): Promise<ChildProcess> {
  const p = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    p.stdout!.on("data", (d: Buffer) => d.toString().includes("Ready to accept connections") && resolve(p));
    p.on("exit", () => reject(new Error("redis-server exited")));
  });
}

describe("rate limits shared through Redis by two gateway processes", () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let node: EmbeddedNode;
  let redis: ChildProcess | undefined;
  let redisPort = 0;
  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 0.25, feeMode: "zero" });
    const env = (failMode: "open" | "closed") => ({
      TESTNET_UPSTREAMS: node.url,
      DATA_DIR: mkdtempSync(join(tmpdir(), "limits-")),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      RATE_LIMIT: "300",
      RATE_LIMIT_WINDOW_MS: "30000",
      RATE_LIMIT_FAIL_MODE: failMode,
      TRUSTED_PROXIES: "127.0.0.1",
    });
    [a, b] = await Promise.all([startGatewayProcess(env("open")), startGatewayProcess(env("closed"))]);
  });
  afterAll(async () => {
    for (const g of [a, b]) g?.child.kill("SIGTERM");
    await Promise.all([a?.exited, b?.exited]);
    redis?.kill("SIGKILL");
    await node?.stop();
  });

  it("two gateway processes sharing Redis together serve the configured limit, not twice it", async () => {
    const headers = { "x-forwarded-for": "10.1.0.1" };
    const [ca, cb] = await Promise.all([burst(a.url + "/", 250, headers, 8), burst(b.url + "/", 250, headers, 8)]);
    expect(ca.other + cb.other).toBe(0);
    expect(ca.ok + cb.ok).toBeGreaterThanOrEqual(297);
    expect(ca.ok + cb.ok).toBeLessThanOrEqual(300);
    expect(ca.ok).toBeGreaterThan(0);
    expect(cb.ok).toBeGreaterThan(0);
  });

  it("Redis dies: fail-open keeps serving, fail-closed refuses with 503; both recover when it returns", async () => {
    redis!.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 300));
    const headers = { "x-forwarded-for": "10.1.0.2" };
    const open = await postJson(a.url + "/", call(1), headers);
    expect(open.status).toBe(200);
    const closed = await postJson(b.url + "/", call(1), headers);
    expect(closed.status).toBe(503);
    expect((closed.json as { error: { message: string } }).error.message).toMatch(/rate limiting is temporarily unavailable/);

    redis = await startRedis(redisPort);
    for (const gw of [a, b]) {
      let recovered = false;
      for (let i = 0; i < 50 && !recovered; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const res = await postJson(gw.url + "/", call(1), headers);
        recovered = res.status === 200 && res.headers.get("x-ratelimit-limit") === "300";
      }
      expect(recovered).toBe(true);
    }
  });
});

describe("malformed keyed REST requests count too (#54)", () => {
  it("POST /zgt/<key>/sponsor-consent with an invalid body counts against the key's limit", async () => {
    const gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = 3) });
    try {
      const url = gw.network("testnet").url;
      const { apiKey } = await gw.keys.create();
      for (const body of ["not json", "{}", '{"rawTransaction": 7}']) expect((await postJson(`${url}/zgt/${apiKey}/sponsor-consent`, body)).status).toBe(400);
      // Three counted: the key's fourth request is over its limit.
      const next = await postJson(`${url}/zgt/${apiKey}`, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
      expect(next.status).toBe(429);
    } finally {
      await gw.close();
    }
  });
});
