// A real API key on near-miss paths (#28.6), at LOG_LEVEL=debug, over HTTP/1.1 (fast lane and node:http) and
// h2: no log line and no answer carries it.
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../src/gateway.js";
import { createLogger } from "../../src/log/logger.js";
import { postJson, testConfig } from "../helpers/gateway.js";

describe("API keys never reach logs or answers", () => {
  let gw: Gateway;
  const lines: string[] = [];
  beforeAll(async () => {
    const log = createLogger("debug", {}, (line) => lines.push(line));
    gw = await startGateway(testConfig(), { log });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("near-miss paths with a real key, every method and transport", async () => {
    const base = gw.network("testnet").url;
    const { apiKey } = (await postJson(base + "/portal/keys", { label: "redaction" })).json as { apiKey: string };
    expect(apiKey).toMatch(/^cgw_/);
    const secret = apiKey.slice(4); // the part that must never show, prefix or not
    const paths = [
      `/zgt//${apiKey}`,
      `/ZGT/${apiKey}`,
      `/ZKT/${apiKey}`,
      `/zkt//${apiKey}`,
      `/zkt/transactions/${apiKey}`,
      `/zkt/transactions/${secret}`,
      `/zkt/${apiKey}/extra`,
      `/${apiKey}`,
      `/rpc/${apiKey}`,
      `/zkt/docs/${apiKey}`,
      `/?key=${apiKey}`,
      `/zkt/${apiKey}?x=1`,
    ];
    const answers: string[] = [];
    for (const path of paths) {
      for (const method of ["GET", "POST", "PUT"]) {
        const res = await fetch(base + path, {
          method,
          headers: { "content-type": "application/json" },
          ...(method === "GET" ? {} : { body: '{"arguments":"hi"}' }),
        });
        answers.push(await res.text());
      }
    }
    // Over h2 (gRPC-Web/Connect clients), the same paths.
    const session = http2.connect(base);
    for (const path of paths) {
      answers.push(
        await new Promise<string>((resolve, reject) => {
          const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
          let data = "";
          req.on("data", (d: Buffer) => (data += d.toString()));
          req.on("end", () => resolve(data));
          req.on("error", reject);
          req.end('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
        }),
      );
    }
    session.close();
    await new Promise((r) => setTimeout(r, 100)); // debug lines are written as requests finish
    expect(lines.length).toBeGreaterThan(paths.length);
    const leakedLogs = lines.filter((l) => l.includes(secret));
    const leakedAnswers = answers.filter((a) => a.includes(secret));
    expect(leakedLogs).toEqual([]);
    expect(leakedAnswers).toEqual([]);
  });
});
