// Past a connection cap each IP is told why (503) twenty times a second, and the rest of its connections
// are closed at accept, unanswered (a refusal with a socket object costs memory only a full collection frees:
// refusedAtAcceptMemory.test.ts). A trusted proxy, many clients behind one address, is always told.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

const PROXY = "127.0.0.63";
const CAP = 5;

/** Opens a connection from `localAddress` and tells how it ended: "503" if answered so, else "closed". */
function attempt(port: number, localAddress: string): Promise<"503" | "closed"> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1", localAddress });
    let got = "";
    s.on("error", () => undefined);
    s.on("data", (d) => (got += d.toString()));
    s.on("close", () => resolve(got.startsWith("HTTP/1.1 503") ? "503" : "closed"));
  });
}

describe("connections past a cap", () => {
  let gw: Gateway;
  let port: number;
  const held: net.Socket[] = [];
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.http.maxConnections = CAP;
        c.trustedProxies = [PROXY];
      },
    });
    port = Number(new URL(gw.network("testnet").url).port);
    for (let i = 0; i < CAP; i++) {
      const s = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.65" });
      s.on("error", () => undefined);
      held.push(s);
      await new Promise((r) => s.once("connect", r));
    }
    await new Promise((r) => setTimeout(r, 200));
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await gw?.close();
  });

  it("an IP is answered 503 twenty times a second and closed at accept past that; a trusted proxy always gets the 503", async () => {
    const direct = await Promise.all(Array.from({ length: 60 }, () => attempt(port, "127.0.0.64")));
    const proxied = await Promise.all(Array.from({ length: 60 }, () => attempt(port, PROXY)));
    const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;
    // Sixty at once land in one second (two at most, if a second turns over between them).
    expect(count(direct, "503")).toBeGreaterThanOrEqual(20);
    expect(count(direct, "503")).toBeLessThanOrEqual(40);
    expect(count(direct, "closed")).toBe(60 - count(direct, "503"));
    expect(proxied).toEqual(Array(60).fill("503"));
  });
});
