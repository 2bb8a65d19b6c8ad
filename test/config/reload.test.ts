// Changing a running gateway (#67): started from its configuration file alone (CONFIG_FILE is its only
// variable), the file is changed — an upstream added, the request limit lowered, a method's weight raised —
// and SIGHUP applies it: new traffic follows within 1 s, while an open WebSocket subscription and a stream of
// ZKT writes run through the reload with no error and no write lost. An invalid file, or a change to a
// setting that needs a restart, changes nothing: the admin call names the path and reason, and
// gateway_config_reload_failures_total moves.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Wallet } from "ethers";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { AdminService } from "../../gen/chaingateway/admin/v1/admin_pb.js";
import { batchRpc, freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { postJson, recordSecret } from "../helpers/gateway.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";
import { until } from "../helpers/until.js";

const ADMIN = "ops:reload-test-admin-token-0123456789";

describe("reloading the configuration of a running gateway", () => {
  const children: ChildProcess[] = [];
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    await Promise.all([...(gw ? [gw.child] : []), ...children].map(kill9));
  });

  it("SIGHUP applies an added upstream, a lowered limit and a raised weight within 1 s; WebSockets and writes go on; bad reloads change nothing", {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "reload-"));
    const nodePort = await freePort();
    children.push(await startAnvil(nodePort));
    const [nodeA, nodeB] = [`http://127.0.0.1:${nodePort}`, `http://localhost:${nodePort}`];
    const port = await freePort();
    const mnemonic = Wallet.createRandom().mnemonic!.phrase;
    recordSecret(mnemonic);
    const file = join(dir, "gateway.json");
    const config = (
      over: {
        upstreams?: string[];
        requestsPerWindow?: number;
        weights?: Record<string, number>;
        port?: number;
        more?: Record<string, unknown>;
        cordoned?: string[];
        nodeWeights?: { url: string; weight: number }[];
      } = {},
    ) =>
      JSON.stringify({
        dataDir: join(dir, "data"),
        masterMnemonic: mnemonic,
        logLevel: "info",
        webhooks: { allowPrivate: true },
        ...over.more,
        adminTokens: [ADMIN],
        methodWeights: over.weights ?? {},
        rateLimit: { requestsPerWindow: over.requestsPerWindow ?? 1000, tryItOutRequestsPerWindow: 1_000_000, perIpRequestsPerWindow: 1_000_000 },
        networks: {
          testnet: {
            port: over.port ?? port,
            upstreams: over.upstreams ?? [nodeA],
            ...(over.cordoned ? { cordoned: over.cordoned } : {}),
            ...(over.nodeWeights ? { weights: over.nodeWeights } : {}),
          },
        },
      });
    writeFileSync(file, config());
    gw = await startGatewayProcess({ CONFIG_FILE: file }, "source", "only");
    const url = gw.url;
    const admin = createClient(AdminService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const asAdmin = { headers: { authorization: `Bearer ${ADMIN.slice(4)}` } };
    expect((await admin.listUpstreams({}, asAdmin)).upstreams).toHaveLength(1);
    // A writer with a limit of its own, so lowering the gateway's default does not touch it.
    const writer = (await admin.createKey({ label: "writer", limits: { requestsPerMinute: 1_000_000 } }, asAdmin)).apiKey;

    // Through the reload: a WebSocket subscription and a stream of ZKT writes.
    const ws = new WebSocket(url.replace("http", "ws"));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    let closed = false;
    ws.on("close", () => (closed = true));
    const headsAt: number[] = [];
    ws.on("message", (d: Buffer) => {
      if ((JSON.parse(d.toString()) as { method?: string }).method === "eth_subscription") headsAt.push(Date.now());
    });
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    const acknowledged: string[] = [];
    const failures: string[] = [];
    let writing = true;
    const writes = (async () => {
      for (let i = 0; writing; i++) {
        const res = await postJson(`${url}/zkt/${writer}`, { arguments: `through the reload ${i}` });
        if (res.status === 200) acknowledged.push((res.json as { hash: string }).hash);
        else failures.push(`${res.status} ${res.text}`);
      }
    })();
    await until(() => acknowledged.length >= 20 && headsAt.length >= 2, 20_000);
    // Before: X-Forwarded-For is not believed (one address for both), the portal's keys answer no CORS, no debug lines.
    const publicCall = (from: string) =>
      postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }, { "x-forwarded-for": from }).then((r) =>
        Number(r.headers.get("x-ratelimit-remaining")),
      );
    const r1 = await publicCall("198.51.100.1");
    expect(await publicCall("198.51.100.2")).toBe(r1 - 1);
    const preflight = () =>
      fetch(`${url}/portal/keys`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } }).then((r) =>
        r.headers.get("access-control-allow-origin"),
      );
    expect(await preflight()).toBeNull();
    expect(gw.log()).not.toContain('"level":"debug"');
    const hook = (n: number) =>
      postJson(`${url}/zgt/${writer}/webhooks`, { url: `http://127.0.0.1:9/hook/${n}`, events: ["transaction.completed"] }).then(
        (r) => `${r.status} ${r.text}`,
      );
    expect(await hook(1)).toMatch(/^201 /);

    // The file changed, then SIGHUP: an upstream added, the limit lowered to 9, eth_getBalance weighing 3.
    const reloaded = {
      trustedProxies: ["127.0.0.1"],
      portalKeyOrigins: ["https://app.example"],
      logLevel: "debug",
      webhooks: { perKey: 1, allowPrivate: true },
    };
    writeFileSync(file, config({ upstreams: [nodeA, nodeB], requestsPerWindow: 9, weights: { eth_getBalance: 3 }, more: reloaded }));
    const reloadedAt = Date.now();
    gw.child.kill("SIGHUP");
    await until(async () => (await admin.listUpstreams({}, asAdmin)).upstreams.length === 2, 1_000);
    const probe = (await postJson(`${url}/portal/keys`, { label: "probe" })).json as { apiKey: string };
    const balance = () =>
      postJson(`${url}/zgt/${probe.apiKey}`, {
        jsonrpc: "2.0",
        id: 1,
        method: "eth_getBalance",
        params: ["0x000000000000000000000000000000000000dEaD", "latest"],
      });
    const remaining: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await balance();
      expect(res.status).toBe(200);
      remaining.push(res.headers.get("x-ratelimit-remaining") ?? undefined);
    }
    expect(Date.now() - reloadedAt).toBeLessThan(1_000 + 1_500);
    expect(remaining).toEqual(["6", "3", "0"]);
    const fourth = await balance();
    expect(fourth.status).toBe(429);
    // The proxy is trusted now (each forwarded address its own caller), the portal answers the origin, debug is on.
    expect([await publicCall("198.51.100.3"), await publicCall("198.51.100.4")]).toEqual([8, 8]);
    expect(await preflight()).toBe("https://app.example");
    await until(() => gw!.log().includes('"level":"debug"'), 2_000);
    // Webhook settings: one endpoint a key now; the writer holds one already.
    expect(await hook(2)).toMatch(/^4\d\d .*at most 1 webhook endpoints per key/);

    // An invalid file: refused whole, the path and reason in the admin call's error, the running one kept.
    writeFileSync(file, config({ upstreams: [nodeA, "ftp://nope"], requestsPerWindow: 1 }));
    const invalid = await admin.reloadConfig({}, asAdmin).catch((e: unknown) => e as ConnectError);
    expect(invalid).toBeInstanceOf(ConnectError);
    expect((invalid as ConnectError).code).toBe(Code.InvalidArgument);
    expect((invalid as ConnectError).rawMessage).toContain('networks.testnet.upstreams[1]: "ftp://nope" is not an http(s) URL');
    // A setting that needs a restart: refused, named.
    writeFileSync(file, config({ upstreams: [nodeA, nodeB], requestsPerWindow: 9, weights: { eth_getBalance: 3 }, port: port + 1, more: reloaded }));
    const fixed = await admin.reloadConfig({}, asAdmin).catch((e: unknown) => e as ConnectError);
    expect((fixed as ConnectError).rawMessage).toContain("networks.testnet.port cannot change without a restart");
    // The running configuration stayed: two upstreams, 9 requests a window.
    expect((await admin.listUpstreams({}, asAdmin)).upstreams).toHaveLength(2);
    const other = (await postJson(`${url}/portal/keys`, { label: "other" })).json as { apiKey: string };
    const chain = await postJson(`${url}/zgt/${other.apiKey}`, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    expect(chain.headers.get("x-ratelimit-limit")).toBe("9");
    // A node cordoned by the file: out of service (probed, sent nothing), as the admin API's cordon; then back.
    writeFileSync(
      file,
      config({
        upstreams: [nodeA, nodeB],
        requestsPerWindow: 9,
        weights: { eth_getBalance: 3 },
        more: reloaded,
        cordoned: [nodeB],
      }),
    );
    expect((await admin.reloadConfig({}, asAdmin)).changed).toEqual(["networks.testnet.cordoned"]);
    const states = async () => (await admin.listUpstreams({}, asAdmin)).upstreams.map((u) => u.cordoned);
    expect(await states()).toEqual([false, true]);
    writeFileSync(file, config({ upstreams: [nodeA, nodeB], requestsPerWindow: 9, weights: { eth_getBalance: 3 }, more: reloaded }));
    expect((await admin.reloadConfig({}, asAdmin)).changed).toEqual(["networks.testnet.cordoned"]);
    expect(await states()).toEqual([false, false]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_config_reload_failures_total 2$/m);
    expect(metrics).toMatch(/^gateway_config_reloads_total\{outcome="applied"\} 3$/m);
    // An upstream's routing weight, live.
    writeFileSync(
      file,
      config({ upstreams: [nodeA, nodeB], requestsPerWindow: 9, weights: { eth_getBalance: 3 }, more: reloaded, nodeWeights: [{ url: nodeB, weight: 50 }] }),
    );
    expect((await admin.reloadConfig({}, asAdmin)).changed).toEqual(["networks.testnet.weights"]);
    expect((await admin.listUpstreams({}, asAdmin)).upstreams.map((u) => u.weight)).toEqual([1, 50]);

    // The writes and the subscription went on through it all.
    const headsBefore = headsAt.filter((t) => t > reloadedAt).length;
    await new Promise((r) => setTimeout(r, 1_000));
    writing = false;
    await writes;
    ws.close();
    expect(failures).toEqual([]);
    expect(closed).toBe(false);
    expect(headsAt.filter((t) => t > reloadedAt).length).toBeGreaterThan(headsBefore);
    // Every acknowledged write mined once (each hash has a receipt; a hash is one transaction).
    let unmined = acknowledged;
    await until(async () => {
      const receipts = await batchRpc<{ status: string } | null>(
        nodeA,
        "eth_getTransactionReceipt",
        unmined.map((h) => [h]),
      );
      unmined = unmined.filter((_, i) => !receipts[i]);
      return unmined.length === 0;
    }, 30_000).catch(() => undefined);
    expect(unmined).toEqual([]);
    expect(new Set(acknowledged).size).toBe(acknowledged.length);
  });
});
