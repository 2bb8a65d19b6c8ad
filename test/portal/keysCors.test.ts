// POST /portal/keys mints a key from the caller's IP and shows it (#51): another web page must not be able to
// do that from its visitors' browsers and read the key. No CORS headers for it, preflight included, unless an
// operator lists the origin (PORTAL_KEY_ORIGINS); the API itself stays open to any origin.
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

/** One request over cleartext HTTP/2 (the node:http2 path, not the HTTP/1.1 fast lane). */
async function h2(url: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  const session = http2.connect(url);
  try {
    return await new Promise<{ status: number; headers: http2.IncomingHttpHeaders }>((resolve, reject) => {
      const req = session.request({ ":method": method, ":path": path, ...headers });
      req.on("response", (h) => {
        req.resume();
        req.on("end", () => resolve({ status: Number(h[":status"]), headers: h }));
      });
      req.on("error", reject);
      req.end(body);
    });
  } finally {
    session.close();
  }
}

describe("CORS of POST /portal/keys", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.portalKeyOrigins = ["https://console.example.com"]) });
    url = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("a foreign origin gets no access-control-allow-origin, over HTTP/1.1 and HTTP/2, preflight included", async () => {
    const foreign = { origin: "https://example.org" };
    const res = await postJson(url + "/portal/keys", {}, foreign);
    expect(res.status).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const viaH2 = await h2(url, "POST", "/portal/keys", { ...foreign, "content-type": "application/json" }, "{}");
    expect(viaH2.status).toBe(201);
    expect(viaH2.headers["access-control-allow-origin"]).toBeUndefined();
    const preflight = await fetch(url + "/portal/keys", {
      method: "OPTIONS",
      headers: { ...foreign, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-methods")).toBeNull();
  });

  it("an origin the operator listed is answered with itself; the API stays open to any origin", async () => {
    const listed = await postJson(url + "/portal/keys", {}, { origin: "https://console.example.com" });
    expect(listed.headers.get("access-control-allow-origin")).toBe("https://console.example.com");
    expect(listed.headers.get("vary")).toMatch(/origin/i);
    const api = await postJson(url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }, { origin: "https://example.org" });
    expect(api.headers.get("access-control-allow-origin")).toBe("*");
  });
});
