// Past a connection cap, or past its new connections per second, each IP is told why (503) twenty times a
// second, and the rest of its connections are closed at accept, unanswered (a refusal with a socket object
// costs memory only a full collection frees: refusedAtAcceptMemory.test.ts). A trusted proxy, many clients
// behind one address, is never refused at accept.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

const PROXY = "127.0.0.63";
const CAP = 5;

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';

/**
 * Opens a connection from `localAddress` (with `call`, sends one JSON-RPC call on it) and tells how it ended:
 * "200" or "503" if answered so, else "closed".
 */
function attempt(port: number, localAddress: string, call = false): Promise<"200" | "503" | "closed"> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1", localAddress });
    let got = "";
    s.on("error", () => undefined);
    if (call)
      s.on("connect", () =>
        s.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${CALL.length}\r\nconnection: close\r\n\r\n${CALL}`),
      );
    s.on("data", (d) => (got += d.toString()));
    s.on("close", () => {
      const status = got.slice(9, 12);
      resolve(status === "200" || status === "503" ? status : "closed");
    });
  });
}
const count = (xs: string[], x: string) => xs.filter((y) => y === x).length;

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
    // Sixty at once land in one second (two at most, if a second turns over between them).
    expect(count(direct, "503")).toBeGreaterThanOrEqual(20);
    expect(count(direct, "503")).toBeLessThanOrEqual(40);
    expect(count(direct, "closed")).toBe(60 - count(direct, "503"));
    expect(proxied).toEqual(Array(60).fill("503"));
  });
});

describe("new connections per IP per second", () => {
  let gw: Gateway;
  let port: number;
  const RATE = 50;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.http.newConnectionsPerIpPerSecond = RATE;
        c.trustedProxies = [PROXY];
      },
    });
    port = Number(new URL(gw.network("testnet").url).port);
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("past the rate an IP is answered 503 twenty times a second and closed at accept past that (counted); a trusted proxy is not limited", async () => {
    const direct = await Promise.all(Array.from({ length: 150 }, () => attempt(port, "127.0.0.66", true)));
    // 150 at once land in one second (two at most): 50 served in each, 20 told in each, the rest closed.
    const [served, told, closed] = [count(direct, "200"), count(direct, "503"), count(direct, "closed")];
    const detail = JSON.stringify({ served, told, closed });
    expect(served, detail).toBeGreaterThanOrEqual(RATE);
    expect(served, detail).toBeLessThanOrEqual(2 * RATE);
    expect(told, detail).toBeGreaterThanOrEqual(20);
    expect(closed, detail).toBeGreaterThan(0);
    const proxied = await Promise.all(Array.from({ length: 150 }, () => attempt(port, PROXY, true)));
    expect(count(proxied, "200")).toBe(150);
    await new Promise((r) => setTimeout(r, 1_000));
    const metrics = await (await fetch(`${gw.network("testnet").url}/metrics`)).text();
    const refused = Number(/gateway_connections_refused_at_accept_total\{network="testnet",reason="connection_rate"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    expect(refused, detail).toBe(closed);
  });
});
