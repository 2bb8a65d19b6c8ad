// Lock-down an operator reaches for first (#65): self-service keys off (PORTAL_KEYS_PER_HOUR=0 was refused as
// "must be a positive integer"), and metrics on a port of their own (they were public on every network port,
// and scraping both counted every series twice).
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("lock-down", () => {
  let gw: Gateway | undefined;
  afterAll(async () => {
    await gw?.close();
  });

  it("PORTAL_KEYS_PER_HOUR=0 is a valid setting, and METRICS_PORT / METRICS_HOST are read", () => {
    const config = loadConfig({ PORTAL_KEYS_PER_HOUR: "0", METRICS_PORT: "9464", METRICS_HOST: "10.0.0.5" }, "/nonexistent");
    expect(config.portalKeysPerHour).toBe(0);
    expect(config.metricsPort).toBe(9464);
    expect(config.metricsHost).toBe("10.0.0.5");
    expect(() => loadConfig({ PORTAL_KEYS_PER_HOUR: "-1" }, "/nonexistent")).toThrow(/portalKeysPerHour.*whole number/s);
  });

  it("keys off: POST /portal/keys answers 404 saying so, and the portal shows its form off; metrics only on their port", async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.portalKeysPerHour = 0;
        c.metricsPort = 0;
      },
    });
    const url = gw.network("testnet").url;
    const res = await postJson(`${url}/portal/keys`, { label: "nope" });
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ success: false, errorCode: "NOT_FOUND", error: expect.stringMatching(/self-service keys are off/) });
    const page = await (await fetch(`${url}/portal`)).text();
    expect(page).toContain('id="keys-off"');
    expect(page).toMatch(/<button id="create-key" disabled>/);
    // The admin side still makes keys.
    expect((await gw.keys.create()).apiKey).toMatch(/^cgw_/);

    // Metrics: served once on their own port, and no longer on the network's.
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    expect(gw.metricsUrl).toBeDefined();
    await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    const scraped = await fetch(gw.metricsUrl!);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/gateway_\w+\{[^}]*network="testnet"/);
    expect((await fetch(gw.metricsUrl!.replace(/\/metrics$/, "/other"))).status).toBe(404);
  });
});
