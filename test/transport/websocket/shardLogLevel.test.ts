// A reloaded log level reaches the fan-out shards (#67): a shard sends its log lines to the gateway's logger,
// but filtered at the level it was started with, so a reload to debug showed none of its debug lines. The
// gateway now tells each shard the new level.
import { WebSocket } from "ws";
import { afterAll, describe, expect, it } from "vitest";
import { keyedConfig } from "../../../src/config/reload.js";
import { type Gateway, startGateway } from "../../../src/gateway.js";
import { createLogger } from "../../../src/log/logger.js";
import { testConfig } from "../../helpers/gateway.js";
import { until } from "../../helpers/until.js";

describe("a reloaded log level on the fan-out shards", () => {
  let gw: Gateway | undefined;
  afterAll(() => gw?.close());

  it("an info gateway reloaded to debug gets its shard's debug lines", { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const config = testConfig({
      mutate: (c) => {
        c.websocket.shards = 1;
        c.websocket.socketsInProcess = 0;
      },
    });
    config.logLevel = "info";
    gw = await startGateway(config, {
      log: createLogger("info", {}, (line) => lines.push(line)),
      rereadConfig: () => ({ ...keyedConfig(config), logLevel: "debug" }),
    });
    // A socket forks the shard.
    const ws = new WebSocket(gw.network("testnet").url.replace("http", "ws"));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    expect(lines.filter((l) => l.includes('"level":"debug"') || l.includes('"level":20'))).toEqual([]);
    gw.reload();
    await until(() => lines.some((l) => l.includes("websocket shard log level changed")), 5_000);
    ws.close();
  });
});
