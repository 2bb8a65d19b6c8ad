// Traces (#53): with OTEL_EXPORTER_OTLP_ENDPOINT set, a caller's W3C traceparent is continued, and a test
// OTLP/HTTP receiver gets that trace's spans: the edge (JSON-RPC over HTTP, Connect), the policy, the
// handler, and the upstream call, whose own traceparent reaches the node. Without it, nothing is exported.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedNode, type EmbeddedNode } from "../../src/chain/embeddedNode.js";
import { kill9 } from "../helpers/anvilProcess.js";
import { postJson } from "../helpers/gateway.js";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gatewayProcess.js";
import { until } from "../helpers/until.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

const attrs = (a: { key: string; value: { stringValue?: string; intValue?: string | number } }[] | undefined): Record<string, string> =>
  Object.fromEntries((a ?? []).map(({ key, value }) => [key, String(value.stringValue ?? value.intValue)]));

/** A server that takes what it is sent and keeps it: the OTLP receiver, or a node's front recording headers. */
async function listen(handler: http.RequestListener): Promise<{ url: string; close(): void }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const body = (req: http.IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => resolve(text));
  });

describe("OpenTelemetry traces", () => {
  const spans: OtlpSpan[] = [];
  const resources: Record<string, string>[] = [];
  const nodeTraceparents: string[] = [];
  let node: EmbeddedNode;
  let receiver: Awaited<ReturnType<typeof listen>>;
  let front: Awaited<ReturnType<typeof listen>>;
  let gw: GatewayProcess;

  beforeAll(async () => {
    node = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 1, feeMode: "zero" });
    receiver = await listen(async (req, res) => {
      const payload = JSON.parse(await body(req)) as {
        resourceSpans?: { resource?: { attributes?: OtlpSpan["attributes"] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
      };
      for (const rs of payload.resourceSpans ?? []) {
        resources.push(attrs(rs.resource?.attributes));
        for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    // The node's front door: records each request's traceparent, passes it on to anvil.
    front = await listen(async (req, res) => {
      const text = await body(req);
      if (typeof req.headers.traceparent === "string") nodeTraceparents.push(req.headers.traceparent);
      const answer = await fetch(node.url, { method: "POST", headers: { "content-type": "application/json" }, body: text });
      res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
    });
    gw = await startGatewayProcess({
      DATA_DIR: mkdtempSync(join(tmpdir(), "gw-trace-")),
      TESTNET_UPSTREAMS: front.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
  });
  afterAll(async () => {
    await kill9(gw.child);
    receiver?.close();
    front?.close();
    await node?.stop();
  });

  it("continues a caller's traceparent over JSON-RPC and Connect, down to the node", { timeout: 30_000 }, async () => {
    const traceId = randomBytes(16).toString("hex");
    const parent = randomBytes(8).toString("hex");
    const traceparent = `00-${traceId}-${parent}-01`;
    const res = await postJson(
      gw.url,
      { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: ["0x000000000000000000000000000000000000bEEF", "latest"] },
      { traceparent },
    );
    expect(res.status, res.text).toBe(200);
    await until(() => spans.some((s) => s.traceId === traceId && s.name.startsWith("upstream")), 10_000);
    const mine = spans.filter((s) => s.traceId === traceId);
    const server = mine.find((s) => s.name === "POST /")!;
    expect(server).toBeDefined();
    expect(server.kind).toBe(2); // SERVER
    expect(server.parentSpanId).toBe(parent);
    expect(mine.map((s) => s.name)).toEqual(expect.arrayContaining(["RpcService.Call", "policy RpcService.Call"]));
    const upstream = mine.find((s) => s.name.startsWith("upstream"))!;
    expect(upstream.kind).toBe(3); // CLIENT
    // The node was asked with the upstream span as its parent.
    expect(nodeTraceparents).toContain(`00-${traceId}-${upstream.spanId}-01`);

    // Connect (JSON over HTTP/1.1): the same trace continued from its metadata.
    const connectTrace = randomBytes(16).toString("hex");
    const call = await fetch(`${gw.url}/chaingateway.rpc.v1.RpcService/GetBlockNumber`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${connectTrace}-${parent}-01` },
      body: "{}",
    });
    expect(call.status).toBe(200);
    await until(() => spans.some((s) => s.traceId === connectTrace && s.name === "/chaingateway.rpc.v1.RpcService/GetBlockNumber"), 10_000);
    expect(spans.filter((s) => s.traceId === connectTrace).map((s) => s.name)).toEqual(expect.arrayContaining(["RpcService.GetBlockNumber"]));
  });

  it("spans carry OpenTelemetry's attributes; the resource names version and instance; no trace starts without a request (#65)", {
    timeout: 30_000,
  }, async () => {
    const traceId = randomBytes(16).toString("hex");
    await postJson(
      gw.url,
      { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: ["0x000000000000000000000000000000000000bEEF", "latest"] },
      {
        traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
      },
    );
    await until(() => spans.some((s) => s.traceId === traceId && s.name === "RpcService.Call"), 10_000);
    const mine = spans.filter((s) => s.traceId === traceId);
    expect(attrs(mine.find((s) => s.name === "POST /")!.attributes)).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/",
      "url.path": "/",
      "http.response.status_code": "200",
    });
    expect(attrs(mine.find((s) => s.name === "RpcService.Call")!.attributes)).toMatchObject({
      "rpc.system": "jsonrpc",
      "rpc.method": "eth_getBalance",
      "gateway.network": "testnet",
      "gateway.transport": "http",
    });
    expect(resources.at(-1)).toMatchObject({ "service.name": "chain-gateway", "service.version": expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(resources.at(-1)!["service.instance.id"]).toMatch(/:\d+$/);
    // Two idle seconds (head polls, probes, the sequencer's passes): no trace begins without a request. Every
    // span with no parent is a request's server span.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(spans.filter((s) => !s.parentSpanId && s.kind !== 2).map((s) => s.name)).toEqual([]);
  });
});
