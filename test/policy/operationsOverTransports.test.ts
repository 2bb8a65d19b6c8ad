// Walks the policy table (src/policy/operations.ts) over every transport that carries each operation — REST
// (JSON-RPC and ZKT paths), Connect JSON, gRPC and gRPC-Web — and checks each rule holds the same on all of
// them (#29): the request limit, the try-it-out limit for public ZKT, authentication, idempotency.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ConnectError, Code, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { create, fromJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import type { Gateway } from "../../src/gateway.js";
import { OPERATIONS, operationOf, type OperationName } from "../../src/policy/operations.js";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { AdminService } from "../../gen/chaingateway/admin/v1/admin_pb.js";
import { WebhookService } from "../../gen/chaingateway/webhooks/v1/webhooks_pb.js";
import { ServerReflection, ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

const LIMIT = 3;
const TRY_IT_OUT = 2;
const VIEW_ABI = [{ type: "function", name: "n", inputs: [], outputs: [{ name: "", type: "uint256" }], stateMutability: "view" }];
const WRITE_ABI = [{ type: "function", name: "inc", inputs: [], outputs: [], stateMutability: "nonpayable" }];
const SOMEWHERE = "0x000000000000000000000000000000000000dEaD";
const QUEUE_ID = "019ab2c3-4d5e-7f60-8123-456789abcdef";
const SOURCE = "pragma solidity ^0.8.0; contract P { uint256 public n; }";

type Verdict = "ok" | "rate_limited" | "unauthenticated" | "other";
interface Creds {
  apiKey?: string;
  ip: string;
}
type Wire = "rest" | "connect" | "grpc" | "grpc-web";

const list = (v: unknown[]) => fromJson(ListValueSchema, v as never);

describe("the policy table holds the same over every transport", () => {
  let gw: Gateway;
  let url: string;
  let ipCounter = 0;
  const nextIp = () => `10.9.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.requestsPerWindow = LIMIT;
        c.rateLimit.tryItOutRequestsPerWindow = TRY_IT_OUT;
        c.portalKeysPerHour = 100_000;
        c.trustedProxies = ["127.0.0.1", "::1", "::ffff:127.0.0.1"];
        c.adminTokens = ["walk-admin-token-0123456789abcdef"];
        // Admin calls are counted per IP on a budget of their own (#62), walked here at the same size.
        c.rateLimit.adminAttemptsPerWindow = LIMIT;
      },
    });
    url = gw.network("testnet").url;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const newKey = async (): Promise<string> => ((await postJson(url + "/portal/keys", {}, { "x-forwarded-for": nextIp() })).json as { apiKey: string }).apiKey;

  function transport(wire: Exclude<Wire, "rest">, creds: Creds, idempotencyKey?: string): Transport {
    const headers: Interceptor = (next) => async (req) => {
      req.header.set("x-forwarded-for", creds.ip);
      if (creds.apiKey) req.header.set("authorization", `Bearer ${creds.apiKey}`);
      if (idempotencyKey) req.header.set("idempotency-key", idempotencyKey);
      return next(req);
    };
    if (wire === "connect") return createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors: [headers] });
    if (wire === "grpc-web") return createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1", interceptors: [headers] });
    return createGrpcTransport({ baseUrl: url, interceptors: [headers] });
  }

  /** Each operation as each wire carries it; REST carries those it has a path for. */
  const calls: Record<OperationName, { rest?: (c: Creds) => Promise<number>; connect: (t: Transport) => Promise<unknown>; grpcOnly?: true }> = {
    "RpcService.Call": {
      rest: (c) => rest(`/zgt/${c.apiKey}`, c, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
      connect: (t) => createClient(RpcService, t).call({ method: "eth_blockNumber" }),
    },
    "RpcService.Batch": {
      rest: (c) => rest(`/zgt/${c.apiKey}`, c, [{ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }]),
      connect: (t) => createClient(RpcService, t).batch({ calls: [{ method: "eth_chainId" }] }),
    },
    "RpcService.GetChainId": { connect: (t) => createClient(RpcService, t).getChainId({}) },
    "RpcService.GetBlockNumber": { connect: (t) => createClient(RpcService, t).getBlockNumber({}) },
    "RpcService.GetBalance": { connect: (t) => createClient(RpcService, t).getBalance({ address: SOMEWHERE, block: "latest" }) },
    "RpcService.SendRawTransaction": { connect: (t) => createClient(RpcService, t).sendRawTransaction({ rawTransaction: "0x00" }) },
    "RpcService.GetValidatorList": { connect: (t) => createClient(RpcService, t).getValidatorList({}) },
    "RpcService.GetActiveValidatorList": { connect: (t) => createClient(RpcService, t).getActiveValidatorList({}) },
    "RpcService.GetSupportedTokens": { connect: (t) => createClient(RpcService, t).getSupportedTokens({}) },
    "RpcService.SignSponsorConsent": {
      rest: (c) => rest(`/zgt/${c.apiKey ?? "none"}/sponsor-consent`, c, { rawTransaction: "0x00" }),
      connect: (t) => createClient(RpcService, t).signSponsorConsent({ rawTransaction: "0x00" }),
    },
    "RpcService.RequestTestFunds": {
      rest: (c) => rest(`/zgt/${c.apiKey ?? "none"}/faucet`, c, { address: SOMEWHERE }),
      connect: (t) => createClient(RpcService, t).requestTestFunds({ address: SOMEWHERE }),
    },
    "RpcService.SendSponsoredTransaction": { connect: (t) => createClient(RpcService, t).sendSponsoredTransaction({ rawTransaction: "0x00" }) },
    "RpcService.GetUsage": {
      rest: (c) => restGet(`/zgt/${c.apiKey ?? "none"}/usage`, c),
      connect: (t) => createClient(RpcService, t).getUsage({}),
    },
    "ZktService.WriteMessage": {
      rest: (c) => rest(zktPath(c), c, { arguments: "policy walk" }),
      connect: (t) => createClient(ZktService, t).writeMessage({ message: "policy walk" }),
    },
    "ZktService.ReadContract": {
      rest: (c) => rest(zktPath(c), c, { to: SOMEWHERE, abi: VIEW_ABI, method: "n", arguments: [] }),
      connect: (t) => createClient(ZktService, t).readContract({ to: SOMEWHERE, abi: list(VIEW_ABI), method: "n", arguments: list([]) }),
    },
    "ZktService.WriteContract": {
      rest: (c) => rest(zktPath(c), c, { to: SOMEWHERE, abi: WRITE_ABI, method: "inc", arguments: [] }),
      connect: (t) => createClient(ZktService, t).writeContract({ to: SOMEWHERE, abi: list(WRITE_ABI), method: "inc", arguments: list([]) }),
    },
    "ZktService.DeployContract": {
      rest: (c) => rest(zktPath(c), c, { code: SOURCE, wait: false }),
      connect: (t) => createClient(ZktService, t).deployContract({ code: SOURCE, wait: false }),
    },
    "RpcService.SubscribeNewHeads": { connect: (t) => first(createClient(RpcService, t).subscribeNewHeads({})) },
    "RpcService.SubscribeLogs": { connect: (t) => first(createClient(RpcService, t).subscribeLogs({ addresses: [SOMEWHERE] }, { timeoutMs: 300 })) },
    "ZktService.WatchTransaction": { connect: (t) => first(createClient(ZktService, t).watchTransaction({ queueId: QUEUE_ID })) },
    // A bidirectional stream: gRPC (HTTP/2) only; a message asked is a request (the list of services here).
    "ServerReflection.ServerReflectionInfo": {
      connect: (t) => first(createClient(ServerReflection, t).serverReflectionInfo(listServices())),
      grpcOnly: true,
    },
    "ZktService.GetTransactionStatus": {
      rest: (c) => restGet(`/zkt/transactions/${QUEUE_ID}`, c),
      connect: (t) => createClient(ZktService, t).getTransactionStatus({ queueId: QUEUE_ID }),
    },
    // A key's webhooks: a key required.
    "WebhookService.RegisterWebhook": { connect: (t) => createClient(WebhookService, t).registerWebhook({ url: "http://127.0.0.1:9/", events: ["x"] }) },
    "WebhookService.ListWebhooks": { connect: (t) => createClient(WebhookService, t).listWebhooks({}) },
    "WebhookService.DeleteWebhook": { connect: (t) => createClient(WebhookService, t).deleteWebhook({ id: "x" }) },
    "WebhookService.ListDeliveries": { connect: (t) => createClient(WebhookService, t).listDeliveries({ webhookId: "x" }) },
    "WebhookService.GetCallbackSecret": { connect: (t) => createClient(WebhookService, t).getCallbackSecret({}) },
    "WebhookService.RotateWebhookSecret": { connect: (t) => createClient(WebhookService, t).rotateWebhookSecret({ id: "x" }) },
    "WebhookService.RotateCallbackSecret": { connect: (t) => createClient(WebhookService, t).rotateCallbackSecret({}) },
    "WebhookService.ReplayDelivery": { connect: (t) => createClient(WebhookService, t).replayDelivery({ webhookId: "x", deliveryId: "y" }) },
    // The admin API: an admin token, never a key; counted per IP on the admin budget (a guessing caller is limited).
    "AdminService.ListKeys": { connect: (t) => createClient(AdminService, t).listKeys({}) },
    "AdminService.CreateKey": { connect: (t) => createClient(AdminService, t).createKey({}) },
    "AdminService.RevokeKey": { connect: (t) => createClient(AdminService, t).revokeKey({ id: "x" }) },
    "AdminService.SetKeyLimits": { connect: (t) => createClient(AdminService, t).setKeyLimits({ id: "x" }) },
    "AdminService.RotateCallbackSecret": { connect: (t) => createClient(AdminService, t).rotateCallbackSecret({ id: "x" }) },
    "AdminService.MoveKeyWallet": { connect: (t) => createClient(AdminService, t).moveKeyWallet({ id: "x" }) },
    "AdminService.ListUpstreams": { connect: (t) => createClient(AdminService, t).listUpstreams({}) },
    "AdminService.CordonUpstream": { connect: (t) => createClient(AdminService, t).cordonUpstream({ url: "x" }) },
    "AdminService.UncordonUpstream": { connect: (t) => createClient(AdminService, t).uncordonUpstream({ url: "x" }) },
    "AdminService.ListStuckWrites": { connect: (t) => createClient(AdminService, t).listStuckWrites({}) },
    "AdminService.ResendWrite": { connect: (t) => createClient(AdminService, t).resendWrite({ queueId: "x" }) },
    "AdminService.CancelWrite": { connect: (t) => createClient(AdminService, t).cancelWrite({ queueId: "x" }) },
    "AdminService.ReloadConfig": { connect: (t) => createClient(AdminService, t).reloadConfig({}) },
  };
  async function* listServices() {
    yield create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } });
  }
  /** A stream's verdict is its opening: the first message (or the error it opened with). */
  const first = async (stream: AsyncIterable<unknown>): Promise<unknown> => {
    for await (const m of stream) return m;
  };
  const zktPath = (c: Creds) => (c.apiKey ? `/zkt/${c.apiKey}` : "/zkt/try-it-out");
  const rest = async (path: string, c: Creds, body: unknown) => (await postJson(url + path, body, { "x-forwarded-for": c.ip })).status;
  const restGet = async (path: string, c: Creds) => (await fetch(url + path, { headers: { "x-forwarded-for": c.ip } })).status;

  async function invoke(wire: Wire, op: OperationName, creds: Creds): Promise<Verdict | undefined> {
    const entry = calls[op];
    if (entry.grpcOnly && wire !== "grpc") return undefined;
    if (wire === "rest") {
      if (!entry.rest) return undefined;
      // GET /zkt/transactions has no key in its path: it is public over REST.
      if (op === "ZktService.GetTransactionStatus" && creds.apiKey) return undefined;
      if ((op === "RpcService.Call" || op === "RpcService.Batch") && !creds.apiKey) return undefined; // POST / is the public twin, covered below
      const status = await entry.rest(creds);
      return status === 429 ? "rate_limited" : status === 401 ? "unauthenticated" : status < 300 ? "ok" : "other";
    }
    try {
      await entry.connect(transport(wire, creds));
      return "ok";
    } catch (e) {
      const code = (e as ConnectError).code;
      return code === Code.ResourceExhausted ? "rate_limited" : code === Code.Unauthenticated ? "unauthenticated" : "other";
    }
  }

  it("has an entry for every method of the contracts, and no other", () => {
    const methods = [...RpcService.methods, ...ZktService.methods, ...AdminService.methods, ...WebhookService.methods, ...ServerReflection.methods].map((m) =>
      operationOf(m),
    );
    expect(methods.every((m) => m !== undefined)).toBe(true);
    expect(new Set(methods)).toEqual(new Set(Object.keys(OPERATIONS)));
  });

  const wires: Wire[] = ["rest", "connect", "grpc", "grpc-web"];

  it("with a key: the request limit counts every operation, on every wire; a bad key is refused everywhere", { timeout: 120_000 }, async () => {
    const seen: string[] = [];
    for (const op of Object.keys(OPERATIONS) as OperationName[]) {
      for (const wire of wires) {
        const creds = { apiKey: await newKey(), ip: nextIp() };
        const verdicts: (Verdict | undefined)[] = [];
        for (let i = 0; i <= LIMIT; i++) verdicts.push(await invoke(wire, op, creds));
        if (verdicts[0] === undefined) continue;
        seen.push(`${wire} ${op}`);
        expect(verdicts.slice(0, LIMIT), `${wire} ${op}`).not.toContain("rate_limited");
        // A free operation (reading one's usage) takes nothing from the limit; every other one counts.
        expect(verdicts[LIMIT], `${wire} ${op}`).toBe((OPERATIONS[op] as { free?: true }).free ? "ok" : "rate_limited");
        expect(await invoke(wire, op, { apiKey: "cgw_not-a-real-key", ip: nextIp() }), `${wire} ${op} bad key`).toBe("unauthenticated");
      }
    }
    // Every operation was walked on the three Connect wires, and REST's paths on REST.
    expect(seen.filter((s) => s.startsWith("rest ")).length).toBe(9);
    // Reflection is on gRPC only.
    expect(seen.length).toBe(9 + 3 * Object.keys(OPERATIONS).length - 2);
  });

  it("without a key: public ZKT spends the try-it-out limit on every wire, status lookups only the request limit, and a key-only operation is refused", {
    timeout: 120_000,
  }, async () => {
    for (const op of Object.keys(OPERATIONS) as OperationName[]) {
      const rule = OPERATIONS[op];
      for (const wire of wires) {
        const creds = { ip: nextIp() };
        const first = await invoke(wire, op, creds);
        if (first === undefined) continue;
        if (rule.auth === "required") {
          expect(first, `${wire} ${op}`).toBe("unauthenticated");
          continue;
        }
        const verdicts: (Verdict | undefined)[] = [first];
        for (let i = 0; i < LIMIT; i++) verdicts.push(await invoke(wire, op, creds));
        const allowed = rule.limit === "requests+tryItOut" ? TRY_IT_OUT : LIMIT;
        expect(verdicts.slice(0, allowed), `${wire} ${op}`).not.toContain("rate_limited");
        expect(verdicts[allowed], `${wire} ${op}`).toBe("rate_limited");
      }
    }
    // POST / is JSON-RPC's public twin of Call and Batch: the same request limit (a batch of n counts n).
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) statuses.push(await rest("/", { ip }, { jsonrpc: "2.0", id: i, method: "eth_chainId", params: [] }));
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("an idempotency key replays a write on every wire, and the same key with another payload is refused (422 / FailedPrecondition)", {
    timeout: 60_000,
  }, async () => {
    const apiKey = await newKey();
    const ip = nextIp();
    const first = await postJson(url + `/zkt/${apiKey}`, { arguments: "once" }, { "idempotency-key": "walk-1", "x-forwarded-for": ip });
    const again = await postJson(url + `/zkt/${apiKey}`, { arguments: "once" }, { "idempotency-key": "walk-1", "x-forwarded-for": ip });
    expect((again.json as { hash: string }).hash).toBe((first.json as { hash: string }).hash);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await postJson(url + `/zkt/${apiKey}`, { arguments: "other" }, { "idempotency-key": "walk-1", "x-forwarded-for": ip });
    expect(other.status, other.text).toBe(422);
    for (const wire of ["connect", "grpc", "grpc-web"] as const) {
      const client = createClient(ZktService, transport(wire, { apiKey: await newKey(), ip: nextIp() }));
      const a = await client.writeMessage({ message: "once", idempotencyKey: `walk-${wire}` });
      const b = await client.writeMessage({ message: "once", idempotencyKey: `walk-${wire}` });
      expect(b.hash, wire).toBe(a.hash);
      const mismatch = await client.writeMessage({ message: "other", idempotencyKey: `walk-${wire}` }).catch((e: unknown) => e as ConnectError);
      expect((mismatch as ConnectError).code, wire).toBe(Code.FailedPrecondition);
    }
    // JSON-RPC: the key covers the call (method and params), not the envelope's id — a client's retry comes
    // with a new id and is replayed under it; another call under the key is refused, rendered as a JSON-RPC
    // error, not a ZKT body.
    const k = await newKey();
    const call = (id: number, method: string) =>
      postJson(url + `/zgt/${k}`, { jsonrpc: "2.0", id, method, params: [] }, { "idempotency-key": "rpc-1", "x-forwarded-for": nextIp() });
    const original = await call(1, "eth_chainId");
    const retry = await call(2, "eth_chainId");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json).toEqual({ ...(original.json as object), id: 2 });
    const reused = await call(3, "net_version");
    expect(reused.status).toBe(422);
    expect(reused.json).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: expect.stringMatching(/different request payload/) } });
  });
});
