// A client that aborts its request body is no fault of the gateway's (#51): it was an error-level "request
// failed" line each time, so any client could flood the log. Now a debug line each, and a warn summary a minute.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../src/gateway.js";
import { createLogger } from "../../src/log/logger.js";
import { testConfig } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

describe("clients that abort their bodies", () => {
  const lines: string[] = [];
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway(testConfig(), { log: createLogger("debug", {}, (l) => lines.push(l)) });
  });
  afterAll(() => gw?.close());

  it("are logged at debug, never as errors", async () => {
    const port = Number(new URL(gw.network("testnet").url).port);
    for (let i = 0; i < 20; i++) {
      const s = net.connect(port, "127.0.0.1");
      await new Promise((r) => s.once("connect", r));
      // Chunked: node:http reads it (not the fast lane), and the abort reaches the route reading its body.
      s.write(`POST ${i % 2 ? "/" : "/portal/keys"} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"a":\r\n`);
      await new Promise((r) => setTimeout(r, 30));
      s.destroy();
    }
    await until(() => lines.filter((l) => l.includes("client closed its request")).length === 20);
    expect(lines.filter((l) => /"level":"(error|warn)"/.test(l))).toEqual([]);
    expect(lines.filter((l) => l.includes("client closed its request")).every((l) => l.includes('"level":"debug"'))).toBe(true);
  });
});
