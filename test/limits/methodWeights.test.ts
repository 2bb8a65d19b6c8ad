// Method weights (#54): with METHOD_WEIGHTS an eth_getLogs counts its units against the request limit, over
// HTTP and WebSocket alike, a batch the sum of its calls'; unweighed methods still count 1.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import type { Gateway } from "../../src/gateway.js";
import { MethodWeights } from "../../src/limits/methodWeights.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("method weights", () => {
  it("exact names, then the longest prefix; everything else 1; a batch sums", () => {
    const w = new MethodWeights({ eth_getLogs: 20, "debug_*": 50, "debug_trace*": 80 });
    expect([w.of("eth_getLogs"), w.of("debug_getRawBlock"), w.of("debug_traceCall"), w.of("eth_chainId")]).toEqual([20, 50, 80, 1]);
    expect(w.sum(["eth_getLogs", "eth_chainId"])).toBe(21);
    expect(new MethodWeights({}).uniform).toBe(true);
  });

  it("METHOD_WEIGHTS reads name=units pairs; a bad pair is named", () => {
    const dir = mkdtempSync(join(tmpdir(), "cfg-"));
    expect(loadConfig({ METHOD_WEIGHTS: "eth_getLogs=20, debug_*=50" }, dir).methodWeights).toEqual({ eth_getLogs: 20, "debug_*": 50 });
    expect(() => loadConfig({ METHOD_WEIGHTS: "eth_getLogs" }, dir)).toThrow(/METHOD_WEIGHTS: "eth_getLogs" is not name=number/);
  });

  describe("against the request limit", () => {
    let gw: Gateway;
    let url: string;
    beforeAll(async () => {
      gw = await startTestGateway({
        mutate: (c) => {
          c.rateLimit.requestsPerWindow = 30;
          c.methodWeights = { eth_getLogs: 10 };
        },
      });
      url = gw.network("testnet").url;
    });
    afterAll(() => gw?.close());

    const logs = { jsonrpc: "2.0", method: "eth_getLogs", params: [{ fromBlock: "0x0", toBlock: "0x0" }] };
    const remaining = (r: { headers: Headers }) => Number(r.headers.get("x-ratelimit-remaining"));

    it("counts units: 1 for eth_chainId, 10 for eth_getLogs, 11 for a batch of both, over HTTP and WebSocket", async () => {
      const first = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
      expect(remaining(first)).toBe(29);
      const weighed = await postJson(url, { ...logs, id: 2 });
      expect(weighed.json).toMatchObject({ result: [] });
      expect(remaining(weighed)).toBe(19);
      const batch = await postJson(url, [
        { ...logs, id: 3 },
        { jsonrpc: "2.0", id: 4, method: "eth_chainId", params: [] },
      ]);
      expect(remaining(batch)).toBe(8);
      // 8 left: the WebSocket's eth_getLogs (10) is refused, its eth_chainId (1) is not.
      const ws = new WebSocket(url.replace("http://", "ws://"));
      await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
      const ask = (body: object) =>
        new Promise<{ error?: { code: number } }>((resolve) => {
          ws.once("message", (d) => resolve(JSON.parse(String(d)) as { error?: { code: number } }));
          ws.send(JSON.stringify(body));
        });
      expect((await ask({ ...logs, id: 5 })).error?.code).toBe(-32005);
      expect(await ask({ jsonrpc: "2.0", id: 6, method: "eth_chainId", params: [] })).toMatchObject({ result: "0x133edcb" });
      ws.close();
    });
  });
});
