// A real Prometheus (Debian's package; .ci/run installs it) scrapes a gateway under load (#65): the request
// duration histogram has a series per network, transport and method, and no metric breaks `promtool check
// metrics`. docs/METRICS.md is generated from the same registry.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9 } from "../helpers/anvilProcess.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";
import { dashboardQueries } from "../helpers/dashboard.js";

const PROMETHEUS = "/usr/bin/prometheus";
const PROMTOOL = "/usr/bin/promtool";
const ready = existsSync(PROMETHEUS) && existsSync(PROMTOOL);

describe("metrics reference", () => {
  it("docs/METRICS.md is current (npm run docs:metrics)", async () => {
    const { metricsReference } = await import("../../scripts/metricsReference.js");
    expect(readFileSync("docs/METRICS.md", "utf8")).toBe(metricsReference());
  });
});

describe.skipIf(!ready && !process.env.CI)("a real Prometheus scrapes the gateway", () => {
  let gw: Gateway;
  let prometheus: ChildProcess | undefined;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => void (c.metricsPort = 0) });
  });
  afterAll(async () => {
    if (prometheus) await kill9(prometheus);
    await gw?.close();
  });

  it("a request duration histogram per network, transport and method; promtool check metrics passes", { timeout: 90_000 }, async () => {
    const url = gw.network("testnet").url;
    const metricsUrl = new URL(gw.metricsUrl!);
    // Load over every transport: JSON-RPC over HTTP (single and batch), WebSocket, Connect, gRPC, gRPC-Web.
    for (let i = 0; i < 20; i++) {
      await postJson(url, { jsonrpc: "2.0", id: i, method: "eth_blockNumber", params: [] });
      await postJson(url, [
        { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
        { jsonrpc: "2.0", id: 2, method: "eth_gasPrice", params: [] },
      ]);
    }
    const ws = new WebSocket(url.replace("http", "ws"));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const answered = new Promise((resolve) => ws.once("message", resolve));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }));
    await answered;
    ws.close();
    for (const transport of [
      createConnectTransport({ baseUrl: url, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: url }),
      createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }),
    ]) {
      await createClient(RpcService, transport).call({ method: "eth_blockNumber" });
    }

    // promtool lints the exposition: names, units, _total counters, help texts.
    const text = await (await fetch(metricsUrl)).text();
    const lint = (() => {
      try {
        return execFileSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8", stdio: "pipe" });
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        return `${e.stdout ?? ""}${e.stderr ?? ""}` || String(err);
      }
    })();
    expect(lint.trim()).toBe("");

    // Prometheus itself scrapes it, and its query API sees the histogram's series.
    const dir = mkdtempSync(join(tmpdir(), "prometheus-"));
    writeFileSync(
      join(dir, "prometheus.yml"),
      `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: gateway\n    static_configs: [{ targets: ["${metricsUrl.host}"] }]\n`,
    );
    const port = await freePort();
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: "ignore" },
    );
    const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined);
      if (!res?.ok) return [];
      return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
    };
    await until(async () => (await query("gateway_request_duration_seconds_count")).length > 0, 60_000);
    const series = await query('sum by (network, transport, method) (gateway_request_duration_seconds_count{network="testnet"})');
    const seen = new Set(series.map((s) => `${s.metric.transport} ${s.metric.method}`));
    for (const want of [
      "http eth_blockNumber",
      "http eth_chainId",
      "http eth_gasPrice",
      "websocket eth_blockNumber",
      "connect eth_blockNumber",
      "grpc eth_blockNumber",
      "grpc-web eth_blockNumber",
    ])
      expect(seen, [...seen].join(", ")).toContain(want);
    const http = series.find((s) => s.metric.transport === "http" && s.metric.method === "eth_blockNumber")!;
    expect(Number(http.value[1])).toBeGreaterThanOrEqual(20);
    expect((await query('up{job="gateway"}'))[0]?.value[1]).toBe("1");

    // Every panel of deploy/grafana-dashboard.json is a query this Prometheus evaluates (#67); the traffic and
    // latency panels have data.
    for (const { title, expr } of dashboardQueries()) {
      const res = (await (await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { status: string; error?: string };
      expect(res.status, `${title}: ${res.error ?? ""}`).toBe("success");
    }
    // (A rate needs two scrapes in its window: waited for.)
    for (const title of ["Calls/s by transport", "p99 by network and transport", "Healthy", "Store and Redis up"]) {
      const { expr } = dashboardQueries().find((q) => q.title === title)!;
      await until(async () => (await query(expr)).length > 0, 15_000).catch(() => undefined);
      expect((await query(expr)).length, title).toBeGreaterThan(0);
    }
  });
});
