// The portal in a real browser (Debian's chromium driven by playwright-core): create a key, send a ZKT
// message with it, look up its status; a screenshot is saved to test-artifacts/portal.png.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { HAVE_CHROMIUM, launchChromium } from "../helpers/browser.js";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

describe.skipIf(!HAVE_CHROMIUM)("portal in a browser", () => {
  let gw: Gateway;
  let browser: Browser;
  beforeAll(async () => {
    gw = await startTestGateway();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("creates a key, writes a message with it, and finds its status", async () => {
    const page = await browser.newPage();
    await page.goto(gw.network("testnet").url + "/portal");
    await page.fill("#label", "browser test");
    await page.click("#create-key");
    await page.waitForSelector("#key-out:not([hidden])");
    const key = JSON.parse((await page.textContent("#key-json"))!) as { apiKey: string; walletAddress: string };
    expect(key.apiKey).toMatch(/^cgw_/);
    expect(await page.inputValue("#target")).toBe(key.apiKey);

    // The read example before any deploy holds a placeholder address: the page says so and sends nothing.
    await page.click('[data-example="read"]');
    await page.click("#send");
    expect(await page.textContent("#status")).toMatch(/deploy a contract first/);
    await page.click('[data-example="message"]');
    await page.click("#send");
    await page.waitForFunction(() => document.getElementById("status")!.textContent!.startsWith("HTTP"));
    expect(await page.textContent("#status")).toBe("HTTP 200");
    const sent = JSON.parse((await page.textContent("#response"))!) as { success: boolean; hash: string };
    expect(sent.success).toBe(true);
    const tx = (await gw.network("testnet").pool.call("eth_getTransactionByHash", [sent.hash])) as { from: string } | null;
    expect(tx?.from.toLowerCase()).toBe(key.walletAddress.toLowerCase());

    await page.click("#lookup");
    await page.waitForFunction(() => document.getElementById("status-out")!.textContent!.includes("queueId"));
    expect(await page.textContent("#status-out")).toContain(sent.hash);
    await page.screenshot({ path: "test-artifacts/portal.png", fullPage: true });
  });

  it("your key: pasting it shows its usage and a chart of the last 24 hours (#54)", async () => {
    const { apiKey } = await gw.keys.create();
    const url = gw.network("testnet").url;
    for (let i = 0; i < 3; i++)
      await fetch(`${url}/zgt/${apiKey}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
    await fetch(`${url}/zkt/${apiKey}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"arguments":"usage chart"}' });
    // One browser profile for the visits below (its local storage shared).
    const profile = await browser.newContext();
    const page = await profile.newPage();
    await page.goto(url + "/portal");
    await page.fill("#usage-key", apiKey);
    await page.click("#show-usage");
    await page.waitForSelector("#usage-out:not([hidden])");
    // 3 calls and a write (a request too): 4 requests, 1 write. Reading usage is free and not counted (#65).
    expect(await page.textContent("#usage-totals")).toMatch(/Requests: \d this minute, 4 today, 4 in 30 days · Writes: 1 today, 1 in 30 days/);
    expect(await page.locator("#usage-chart rect.bar-requests").count()).toBe(24);
    // The bars hold them all (the test may cross an hour's turn), and the busiest is full height.
    const values = async (kind: string) =>
      await page.locator(`#usage-chart rect.bar-${kind}`).evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("data-value"))));
    expect((await values("requests")).reduce((a, b) => a + b, 0)).toBe(4);
    expect((await values("writes")).reduce((a, b) => a + b, 0)).toBe(1);
    expect(Math.max(...(await page.locator("#usage-chart rect.bar-requests").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))))))).toBe(120);
    // Read at a glance (#65): axes, the busiest hour's count and hours (UTC) as labels, limits as sentences.
    expect(await page.locator("#usage-chart line.axis-x, #usage-chart line.axis-y").count()).toBe(2);
    const top = Math.max(...(await values("requests")), ...(await values("writes")));
    expect(await page.locator("#usage-chart text.label-y").allTextContents()).toEqual([String(top), "0"]);
    const hours = await page.locator("#usage-chart text.label-x").allTextContents();
    expect(hours.length).toBe(5);
    for (const h of hours) expect(h).toMatch(/^\d\d:00( UTC)?$/);
    const limits = await page.locator("#usage-limits tr").allTextContents();
    expect(limits[0]).toMatch(/^Requests per minute\d+ of \d+ used/);
    expect(limits[1]).toMatch(/^Writes per day1 used \(no limit\)/);
    expect(await page.textContent("#usage-limits")).not.toContain("{");
    await page.screenshot({ path: "test-artifacts/portal-usage.png", fullPage: true });
    // The key is remembered: a new visit shows it already in place, and "forget" clears it.
    const again = await profile.newPage();
    await again.goto(url + "/portal");
    expect(await again.inputValue("#usage-key")).toBe(apiKey);
    await again.click("#forget-key");
    const third = await profile.newPage();
    await third.goto(url + "/portal");
    expect(await third.inputValue("#usage-key")).toBe("");
  });

  it("the ZKT docs page renders the OpenAPI document", async () => {
    const page = await browser.newPage();
    await page.goto(gw.network("testnet").url + "/zkt/docs");
    expect(await page.textContent("h1")).toMatch(/ZKT API/);
    expect(await page.locator("section h3").count()).toBeGreaterThanOrEqual(3);
  });
});
