// Webhooks (#56) against a real chain: a key registers an endpoint; each of its writes' outcomes is POSTed
// there, signed, once, in order, retried until accepted, and never lost to a kill -9; two replicas on one
// PostgreSQL deliver each event once between them; private targets are refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Wallet } from "ethers";
import { WebhookService } from "../../gen/chaingateway/webhooks/v1/webhooks_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, recordSecret, rpc, startTestGateway } from "../helpers/gateway.js";
import { startGatewayProcess } from "../helpers/gatewayProcess.js";
import { freshSchemaUrl } from "../helpers/postgres.js";
import { until } from "../helpers/until.js";
import { type Receiver, startReceiver, verifySignature } from "../helpers/webhookReceiver.js";
import { deployEmitter, devSender, topic } from "../helpers/emitter.js";

const EVENTS = ["transaction.completed", "transaction.error"];

async function register(base: string, apiKey: string, url: string): Promise<{ id: string; secret: string }> {
  const res = await postJson(`${base}/zgt/${apiKey}/webhooks`, { url, events: EVENTS });
  expect(res.status, res.text).toBe(201);
  return res.json as { id: string; secret: string };
}

describe("webhooks", () => {
  const children: ChildProcess[] = [];
  let proxy: FaultyUpstream;
  let node: string;
  let gw: Gateway;
  let base: string;
  let receiver: Receiver;
  beforeAll(async () => {
    const port = await freePort();
    children.push(await startAnvil(port));
    node = `http://127.0.0.1:${port}`;
    proxy = await startFaultyUpstream(node);
    receiver = await startReceiver();
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.networks[0]!.blockTimeSeconds = 0.25;
        c.networks[0]!.headsWebSocket = node.replace("http", "ws");
        c.webhooks.allowPrivate = true;
      },
    });
    base = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    receiver?.close();
    await Promise.all(children.map(kill9));
  });

  // Timing, on a shared machine: retried (the suite runs files side by side).
  it("a write's transaction.completed arrives within a block interval + 100 ms of it being mined, signed", { timeout: 30_000, retry: 2 }, async () => {
    const { apiKey } = await gw.keys.create();
    const { secret } = await register(base, apiKey, receiver.url);
    const write = (await postJson(`${base}/zkt/${apiKey}`, { arguments: "hello webhooks" })).json as { hash: string; queueId: string };
    // Mined when anvil has its receipt (asked every few ms); completed (2 confirmations, the default) one block later.
    let mined: { at: number; block: number } | undefined;
    const deadline = Date.now() + 10_000;
    while (!mined && Date.now() < deadline) {
      const r = await rpc<{ blockNumber: string } | null>(node, "eth_getTransactionReceipt", [write.hash]);
      if (r) mined = { at: performance.now(), block: Number(r.blockNumber) };
      else await new Promise((done) => setTimeout(done, 2));
    }
    await until(() => receiver.got.some((g) => g.json.data.queueId === write.queueId), 10_000);
    const got = receiver.got.find((g) => g.json.data.queueId === write.queueId)!;
    expect(got.at - mined!.at).toBeLessThan(250 + 100);
    expect(got.type).toBe("transaction.completed");
    expect(got.headers["chain-gateway-event-id"]).toBe(got.id);
    expect(verifySignature(got.headers["chain-gateway-signature"] as string, got.body, secret)).toBe(true);
    expect(verifySignature(got.headers["chain-gateway-signature"] as string, got.body, "whsec_wrong")).toBe(false);
    expect(got.json.data).toMatchObject({ queueId: write.queueId, hash: write.hash, status: "completed", blockNumber: mined!.block, succeeded: true });
    expect(got.json.data.blockHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("a contract write's event: its logs decoded with the contract's ABI (the write's own, kept for it)", { timeout: 60_000 }, async () => {
    const own = await startReceiver();
    try {
      const { apiKey } = await gw.keys.create();
      await register(base, apiKey, own.url);
      const code =
        "pragma solidity ^0.8.20; contract Pinger { event Pinged(address indexed from, uint256 n); function ping(uint256 n) external { emit Pinged(msg.sender, n); } }";
      const deployed = (await postJson(`${base}/zkt/${apiKey}`, { code })).json as { contractAddress: string; abi: unknown[] };
      expect(deployed.contractAddress).toMatch(/^0x/);
      const write = (await postJson(`${base}/zkt/${apiKey}`, { to: deployed.contractAddress, abi: deployed.abi, method: "ping", arguments: [5] })).json as {
        queueId: string;
      };
      await until(() => own.got.some((g) => g.json.data.queueId === write.queueId), 15_000);
      const got = own.got.find((g) => g.json.data.queueId === write.queueId)!;
      expect(got.json.data.logs).toEqual([
        expect.objectContaining({ address: deployed.contractAddress.toLowerCase(), event: "Pinged", args: { from: expect.stringMatching(/^0x/), n: "5" } }),
      ]);
    } finally {
      own.close();
    }
  });

  it("a write the node refuses for good: transaction.error with the reason", { timeout: 30_000 }, async () => {
    const { apiKey } = await gw.keys.create();
    await register(base, apiKey, receiver.url);
    proxy.reject(1);
    const write = (await postJson(`${base}/zkt/${apiKey}`, { arguments: "refused" })).json as { queueId: string };
    await until(() => receiver.got.some((g) => g.json.data.queueId === write.queueId), 15_000);
    const got = receiver.got.find((g) => g.json.data.queueId === write.queueId)!;
    expect(got.type).toBe("transaction.error");
    expect(got.json.data.reason).toMatch(/refused by the test/);
  });

  it("500 three times then 200: delivered once more after the failures (same id), in order with the events after it", { timeout: 60_000 }, async () => {
    const own = await startReceiver();
    try {
      const { apiKey } = await gw.keys.create();
      const { id: webhookId } = await register(base, apiKey, own.url);
      let first: string | undefined;
      own.answer = (id, before) => {
        first ??= id;
        return id === first && before < 3 ? 500 : 200;
      };
      const queueIds: string[] = [];
      for (let i = 0; i < 3; i++)
        queueIds.push(((await postJson(`${base}/zkt/${apiKey}`, { arguments: `in order ${i}` })).json as { queueId: string }).queueId);
      await until(() => new Set(own.got.filter((g) => g.status === 200).map((g) => g.id)).size === 3, 30_000);
      // The first event: three 500s, then one 200; every event accepted once; in write order.
      expect(own.got.filter((g) => g.id === first).map((g) => g.status)).toEqual([500, 500, 500, 200]);
      const accepted = own.got.filter((g) => g.status === 200);
      expect(accepted.map((g) => g.json.data.queueId)).toEqual(queueIds);
      expect(new Set(accepted.map((g) => g.id)).size).toBe(3);
      // The later events waited for the first: none arrived before its 200.
      const firstOk = own.got.findIndex((g) => g.id === first && g.status === 200);
      expect(own.got.slice(0, firstOk).every((g) => g.id === first)).toBe(true);
      const { deliveries } = (await fetch(`${base}/zgt/${apiKey}/webhooks/${webhookId}/deliveries`).then((r) => r.json())) as {
        deliveries: { id: string; status: string; attempts: number }[];
      };
      expect(deliveries.find((d) => d.id === first)).toMatchObject({ status: "delivered", attempts: 4 });
      // A replay sends it again, same id.
      const replay = await postJson(`${base}/zgt/${apiKey}/webhooks/${webhookId}/deliveries/${first}/replay`, {});
      expect(replay.status).toBe(200);
      await until(() => own.got.filter((g) => g.id === first).length === 5, 10_000);
    } finally {
      own.close();
    }
  });

  it("log events: each matching contract event once, in order, with the logs subscription's shape", { timeout: 30_000 }, async () => {
    const own = await startReceiver();
    try {
      const send = devSender(node);
      const emitter = await deployEmitter(send, node);
      const { apiKey } = await gw.keys.create();
      const res = await postJson(`${base}/zgt/${apiKey}/webhooks`, {
        url: own.url,
        events: ["log"],
        logs: { address: emitter, topics: [[topic(2), topic(3)]] },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.json).toMatchObject({ logs: { address: [emitter.toLowerCase()], topics: [[topic(2), topic(3)]] } });
      // The subscription starts at the next block.
      await new Promise((r) => setTimeout(r, 500));
      const sent: string[] = [];
      for (const n of [1, 2, 3, 4]) sent.push(await send({ to: emitter, data: topic(n) }));
      await until(() => own.got.length >= 2, 15_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(own.got.map((g) => g.type)).toEqual(["log", "log"]);
      expect(own.got.map((g) => g.json.data.transactionHash)).toEqual([sent[1], sent[2]]);
      expect(own.got[0]!.json.data).toMatchObject({ address: emitter.toLowerCase(), topics: [topic(2)], removed: false });
      // Without an address, or "log" without a filter: refused.
      const bad = await postJson(`${base}/zgt/${apiKey}/webhooks`, { url: own.url, events: ["log"] });
      expect(bad.status).toBe(400);
    } finally {
      own.close();
    }
  });

  it("a write's own callbackUrl: its outcome once, signed with the key's callback secret; a refused write's too", { timeout: 30_000 }, async () => {
    const own = await startReceiver();
    try {
      const { apiKey } = await gw.keys.create();
      const { secret } = (await fetch(`${base}/zgt/${apiKey}/webhooks/callback-secret`).then((r) => r.json())) as { secret: string };
      expect(secret).toMatch(/^whsec_/);
      const ok = (await postJson(`${base}/zkt/${apiKey}`, { arguments: "call me back", callbackUrl: `${own.url}?write=1` })).json as { queueId: string };
      // Its broadcast is on its way before the node starts refusing.
      await until(() => own.got.length >= 1, 15_000);
      proxy.reject(1);
      const refused = (await postJson(`${base}/zkt/${apiKey}`, { arguments: "refused, call me back", callbackUrl: `${own.url}?write=2` })).json as {
        queueId: string;
      };
      await until(() => own.got.length >= 2, 15_000);
      await new Promise((r) => setTimeout(r, 1_000));
      const byQueue = new Map(own.got.map((g) => [String(g.json.data.queueId), g]));
      expect(own.got).toHaveLength(2);
      expect(byQueue.get(ok.queueId)?.type).toBe("transaction.completed");
      expect(byQueue.get(refused.queueId)?.type).toBe("transaction.error");
      for (const g of own.got) expect(verifySignature(g.headers["chain-gateway-signature"] as string, g.body, secret)).toBe(true);
      // The key's callbacks are not one of its endpoints.
      expect(((await fetch(`${base}/zgt/${apiKey}/webhooks`).then((r) => r.json())) as { webhooks: unknown[] }).webhooks).toEqual([]);
      // Public writes cannot ask for one.
      const anonymous = await postJson(`${base}/zkt/try-it-out`, { arguments: "no key", callbackUrl: own.url });
      expect(anonymous.status).toBe(400);
      expect((anonymous.json as { error: string }).error).toMatch(/callbackUrl needs an API key/);
    } finally {
      own.close();
    }
  });

  it("registering: 201 with a secret shown once; Connect too; listed without it; another key's endpoints are not found; deleted", async () => {
    const { apiKey } = await gw.keys.create();
    const { id, secret } = await register(base, apiKey, receiver.url);
    expect(secret).toMatch(/^whsec_/);
    const listed = await fetch(`${base}/zgt/${apiKey}/webhooks`).then((r) => r.text());
    expect(listed).toContain(id);
    expect(listed).not.toContain(secret);
    const client = createClient(
      WebhookService,
      createConnectTransport({
        baseUrl: base,
        httpVersion: "1.1",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${apiKey}`);
            return next(req);
          },
        ],
      }),
    );
    const viaConnect = await client.registerWebhook({ url: receiver.url, events: ["transaction.error"] });
    expect(viaConnect.secret).toMatch(/^whsec_/);
    expect((await client.listWebhooks({})).webhooks.map((w) => w.id).sort()).toEqual([id, viaConnect.webhook!.id].sort());
    const other = await gw.keys.create();
    const del = await fetch(`${base}/zgt/${other.apiKey}/webhooks/${id}`, { method: "DELETE" });
    expect(del.status).toBe(404);
    expect((await fetch(`${base}/zgt/${apiKey}/webhooks/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await client.listWebhooks({})).webhooks.map((w) => w.id)).toEqual([viaConnect.webhook!.id]);
    const bad = await postJson(`${base}/zgt/${apiKey}/webhooks`, { url: receiver.url, events: ["transaction.maybe"] });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ success: false, errorCode: "VALIDATION_ERROR" });
    const err = await client.registerWebhook({ url: "ftp://example.org/", events: EVENTS }).catch((e: unknown) => e as ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((await postJson(`${base}/zgt/cgw_nope/webhooks`, { url: receiver.url, events: EVENTS })).status).toBe(401);
  });
});

describe("webhooks: private targets", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("loopback, private, link-local and metadata addresses are refused at registration without WEBHOOK_ALLOW_PRIVATE", async () => {
    const base = gw.network("testnet").url;
    const { apiKey } = await gw.keys.create();
    for (const url of [
      "http://127.0.0.1/hook",
      "http://169.254.169.254/latest/meta-data/",
      "http://localhost:8080/",
      "http://10.1.2.3/",
      "http://[::1]/",
      "http://192.168.1.1/",
      // IPv6 forms embedding a private IPv4 address (#62): IPv4-compatible, 6to4, IPv4-mapped in hex.
      "http://[::127.0.0.1]/",
      "http://[2002:7f00:1::]/",
      "http://[2002:a9fe:a9fe::1]/",
      "http://[::ffff:7f00:1]/",
      "http://[::a00:1]/",
    ]) {
      const res = await postJson(`${base}/zgt/${apiKey}/webhooks`, { url, events: EVENTS });
      expect(res.status, url).toBe(400);
      expect((res.json as { error: string }).error, url).toMatch(/refused: .*(loopback, private, link-local or metadata|does not resolve)/);
    }
    // A write's own callbackUrl too, before anything is signed: nothing journaled.
    const before = await gw.network("testnet").sequencer.listStuck(0, 1_000);
    const write = await postJson(`${base}/zkt/${apiKey}`, { arguments: "never sent", callbackUrl: "http://169.254.169.254/" });
    expect(write.status).toBe(400);
    expect((await gw.network("testnet").sequencer.listStuck(0, 1_000)).length).toBe(before.length);
  });
});

describe("webhooks: durable", () => {
  const children: ChildProcess[] = [];
  let receiver: Receiver;
  afterAll(async () => {
    receiver?.close();
    await Promise.all(children.map(kill9));
  });

  it("kill -9 between the status change and the delivery: the event arrives after the restart", { timeout: 90_000 }, async () => {
    const port = await freePort();
    children.push(await startAnvil(port));
    const node = `http://127.0.0.1:${port}`;
    receiver = await startReceiver();
    // The receiver is down (503) until the gateway is killed: the event waits in the outbox.
    let up = false;
    receiver.answer = () => (up ? 200 : 503);
    const env = { DATA_DIR: mkdtempSync(join(tmpdir(), "wh-kill-")), TESTNET_UPSTREAMS: node, TESTNET_BLOCK_TIME: "0.25", WEBHOOK_ALLOW_PRIVATE: "true" };
    const first = await startGatewayProcess(env);
    children.push(first.child);
    const key = (await postJson(`${first.url}/portal/keys`, {})).json as { apiKey: string };
    const { secret } = await register(first.url, key.apiKey, receiver.url);
    const write = (await postJson(`${first.url}/zkt/${key.apiKey}`, { arguments: "survives kill -9" })).json as { queueId: string };
    await until(() => receiver.got.some((g) => g.json.data.queueId === write.queueId), 20_000);
    const eventId = receiver.got.find((g) => g.json.data.queueId === write.queueId)!.id;
    first.child.kill("SIGKILL");
    await first.exited;
    up = true;
    const second = await startGatewayProcess(env);
    children.push(second.child);
    await until(() => receiver.got.some((g) => g.id === eventId && g.status === 200), 30_000);
    const delivered = receiver.got.find((g) => g.id === eventId && g.status === 200)!;
    expect(verifySignature(delivered.headers["chain-gateway-signature"] as string, delivered.body, secret)).toBe(true);
    expect(receiver.got.filter((g) => g.status === 200)).toHaveLength(1);
    second.child.kill("SIGTERM");
    await second.exited;
  });
});

describe("webhooks: two replicas on PostgreSQL", () => {
  const children: ChildProcess[] = [];
  const gateways: Gateway[] = [];
  let receiver: Receiver;
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    receiver?.close();
    await Promise.all(children.map(kill9));
    await drop?.();
  });

  it("1,000 writes through both: 1,000 deliveries, none twice", { timeout: 180_000 }, async () => {
    const port = await freePort();
    children.push(await startAnvil(port));
    const node = `http://127.0.0.1:${port}`;
    const schema = await freshSchemaUrl();
    drop = schema.drop;
    const mnemonic = Wallet.createRandom().mnemonic!.phrase;
    recordSecret(mnemonic);
    const replica = () =>
      startTestGateway({
        mutate: (c) => {
          c.databaseUrl = schema.url;
          c.masterMnemonic = mnemonic;
          c.networks[0]!.upstreams = [node];
          c.networks[0]!.blockTimeSeconds = 0.25;
          c.webhooks.allowPrivate = true;
          c.webhooks.eventsPerSecond = 10_000;
          c.rateLimit.requestsPerWindow = 1_000_000;
        },
      });
    gateways.push(await replica());
    gateways.push(await replica());
    receiver = await startReceiver();
    const urls = gateways.map((g) => g.network("testnet").url);
    const { apiKey } = await gateways[0]!.keys.create({ transactionsPerDay: 100_000 });
    await register(urls[0]!, apiKey, receiver.url);
    const queueIds = new Set<string>();
    let n = 0;
    const client = async (url: string) => {
      while (n < 1_000) {
        const i = n++;
        const res = await postJson(`${url}/zkt/${apiKey}`, { arguments: `replicated ${i}` });
        expect(res.status, res.text).toBe(200);
        queueIds.add((res.json as { queueId: string }).queueId);
      }
    };
    await Promise.all(urls.flatMap((u) => Array.from({ length: 8 }, () => client(u))));
    expect(queueIds.size).toBe(1_000);
    await until(() => new Set(receiver.got.map((g) => g.id)).size >= 1_000, 120_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const ids = receiver.got.map((g) => g.id);
    expect(ids).toHaveLength(1_000);
    expect(new Set(ids).size).toBe(1_000);
    expect(new Set(receiver.got.map((g) => String(g.json.data.queueId)))).toEqual(queueIds);

    // A write's own callback through the other replica: once.
    const called = await startReceiver();
    try {
      const write = (await postJson(`${urls[1]}/zkt/${apiKey}`, { arguments: "callback on PostgreSQL", callbackUrl: called.url })).json as { queueId: string };
      await until(() => called.got.length >= 1, 15_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(called.got.map((g) => [g.type, g.json.data.queueId])).toEqual([["transaction.completed", write.queueId]]);
    } finally {
      called.close();
    }

    // Both replicas follow a log endpoint; each log is delivered once between them.
    const logs = await startReceiver();
    try {
      const send = devSender(node);
      const emitter = await deployEmitter(send, node);
      const other = await gateways[1]!.keys.create();
      const res = await postJson(`${urls[1]}/zgt/${other.apiKey}/webhooks`, { url: logs.url, events: ["log"], logs: { address: emitter } });
      expect(res.status, res.text).toBe(201);
      // The other replica reads the endpoint list every 5 s.
      await new Promise((r) => setTimeout(r, 6_000));
      const sent: string[] = [];
      for (let i = 0; i < 5; i++) sent.push(await send({ to: emitter, data: topic(100 + i) }));
      await until(() => logs.got.length >= 5, 20_000);
      await new Promise((r) => setTimeout(r, 2_000));
      expect(logs.got.map((g) => g.json.data.transactionHash)).toEqual(sent);
    } finally {
      logs.close();
    }
  });
});

describe("webhooks: receivers that fail", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.webhooks.allowPrivate = true;
        // Given up 4 s after the event (24 hours by default), retries capped at 1 s.
        c.webhooks.giveUpMs = 4_000;
        c.webhooks.maxRetryMs = 1_000;
        // A key's endpoints together: at most 4 attempts a second.
        c.webhooks.eventsPerSecond = 4;
      },
    });
    base = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const endpointWith = async (answer: Receiver["answer"]) => {
    const receiver = await startReceiver();
    receiver.answer = answer;
    const { apiKey } = await gw.keys.create();
    const { id } = await register(base, apiKey, receiver.url);
    const write = async (text: string) => ((await postJson(`${base}/zkt/${apiKey}`, { arguments: text })).json as { queueId: string }).queueId;
    const deliveries = async () =>
      ((await fetch(`${base}/zgt/${apiKey}/webhooks/${id}/deliveries`).then((r) => r.json())) as { deliveries: { queueId: string; status: string }[] })
        .deliveries;
    return { receiver, apiKey, id, write, deliveries };
  };

  it("a key's endpoints together get at most WEBHOOK_EVENTS_PER_SECOND attempts a second", { timeout: 30_000 }, async () => {
    const [one, two] = [await startReceiver(), await startReceiver()];
    try {
      const { apiKey } = await gw.keys.create();
      await register(base, apiKey, one.url);
      await register(base, apiKey, two.url);
      await Promise.all([1, 2, 3].map((i) => postJson(`${base}/zkt/${apiKey}`, { arguments: `paced ${i}` })));
      await until(() => one.got.length + two.got.length === 6, 15_000);
      const times = [...one.got, ...two.got].map((g) => g.at).sort((a, b) => a - b);
      // 6 attempts at 4 a second: the last at least 5 × 250 ms after the first (a little slack for timers).
      expect(times.at(-1)! - times[0]!).toBeGreaterThan(5 * 250 - 100);
    } finally {
      one.close();
      two.close();
    }
  });

  it("410 disables the endpoint: no more attempts, its event kept, no new ones written", { timeout: 30_000 }, async () => {
    const e = await endpointWith(() => 410);
    try {
      await e.write("gone 1");
      await until(() => e.receiver.got.length === 1, 10_000);
      await e.write("gone 2");
      await new Promise((r) => setTimeout(r, 2_000));
      expect(e.receiver.got).toHaveLength(1);
      const [w] = ((await fetch(`${base}/zgt/${e.apiKey}/webhooks`).then((r) => r.json())) as { webhooks: { disabledReason: string | null }[] }).webhooks;
      expect(w!.disabledReason).toMatch(/410/);
      expect((await e.deliveries()).map((d) => d.status)).toEqual(["pending"]);
    } finally {
      e.receiver.close();
    }
  });

  it("past the give-up time a delivery is failed (visible) and the next one goes", { timeout: 30_000 }, async () => {
    let failing = true;
    const e = await endpointWith(() => (failing ? 500 : 200));
    try {
      const first = await e.write("given up");
      await until(async () => (await e.deliveries()).some((d) => d.queueId === first && d.status === "failed"), 20_000);
      failing = false;
      const second = await e.write("after it");
      await until(() => e.receiver.got.some((g) => g.json.data.queueId === second && g.status === 200), 10_000);
      expect(e.receiver.got.filter((g) => g.json.data.queueId === first).every((g) => g.status === 500)).toBe(true);
    } finally {
      e.receiver.close();
    }
  });

  it("a receiver that never answers delays no other endpoint, and a redirect is not followed", { timeout: 30_000 }, async () => {
    const hanging = http.createServer(() => undefined);
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r));
    const target = await startReceiver();
    const redirecting = http.createServer((_req, res) => res.writeHead(302, { location: target.url }).end());
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    const healthy = await startReceiver();
    try {
      const keyOf = async (url: string) => {
        const { apiKey } = await gw.keys.create();
        await register(base, apiKey, url);
        return apiKey;
      };
      const slow = await keyOf(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`);
      const moved = await keyOf(`http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/`);
      const fine = await keyOf(healthy.url);
      for (const k of [slow, moved]) await postJson(`${base}/zkt/${k}`, { arguments: "to a bad receiver" });
      const started = performance.now();
      const write = (await postJson(`${base}/zkt/${fine}`, { arguments: "to a good one" })).json as { queueId: string };
      await until(() => healthy.got.some((g) => g.json.data.queueId === write.queueId), 5_000);
      // Mined and confirmed within a second; the hanging receiver's 5 s timeout is no part of it.
      expect(performance.now() - started).toBeLessThan(2_500);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(target.got).toHaveLength(0);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
      redirecting.close();
      target.close();
      healthy.close();
    }
  });
});
