// The Connect-Web example page, bundled with esbuild and served from another origin, calls the gateway from
// Debian's chromium (CORS preflights included), follows new blocks on a Connect server stream (#32: streams
// for Connect-Web clients) and writes a ZKT message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { HAVE_CHROMIUM, launchChromium } from "../helpers/browser.js";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

const DIR = "docs/examples/web";

describe.skipIf(!HAVE_CHROMIUM)("Connect-Web example page", () => {
  let gw: Gateway;
  let browser: Browser;
  let site: http.Server;
  let siteUrl: string;
  beforeAll(async () => {
    await build({ entryPoints: [join(DIR, "main.ts")], bundle: true, format: "esm", outfile: join(DIR, "main.js"), logLevel: "silent" });
    gw = await startTestGateway();
    site = http.createServer((req, res) => {
      const file = (req.url ?? "/").split("?")[0] === "/main.js" ? "main.js" : "index.html";
      res.writeHead(200, { "content-type": file.endsWith(".js") ? "text/javascript" : "text/html" }).end(readFileSync(join(DIR, file)));
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    site?.close();
    await gw?.close();
  });

  it("reads the chain id, follows two consecutive blocks on a server stream and writes a message, from another origin", async () => {
    const page = await browser.newPage();
    // Another port is another origin: the browser preflights and needs the gateway's CORS headers.
    await page.goto(`${siteUrl}/?gateway=${encodeURIComponent(gw.network("testnet").url)}`);
    await page.waitForSelector("#out[data-done]");
    const text = (await page.textContent("#out"))!;
    expect(text).not.toMatch(/^error/);
    const out = JSON.parse(text) as { chainId: number; heads: number[]; hash: string };
    expect(out.chainId).toBe(20180427);
    expect(out.heads[1]).toBe(out.heads[0]! + 1);
    const tx = (await gw.network("testnet").pool.call("eth_getTransactionByHash", [out.hash])) as { from: string } | null;
    expect(tx?.from.toLowerCase()).toBe(gw.publicSignerAddress.toLowerCase());
  });
});
