// An IP refused at accept thousands of times a second (#62): banned after an HTTP/2 attack, or past its
// connection share and reconnecting. Each refusal once made a net.Socket that outlived a scavenge and kept
// its native handle until a full collection, so the gateway grew 6-9 MB a second for as long as the attacker
// kept at it (+134 MB over 20 s banned, +178 MB over the connection share). Now the refusal is made inside
// net's accept (its blockList), before a Socket exists; past a connection cap the first refusals each second
// are still told why (503). Measured on the gateway as its own process, RSS from /proc, from when the
// refusals start to the attack's end.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { connectionFlood, h2Attack } from "../../helpers/attackers.js";

const MB = 2 ** 20;
const CAP = 10;
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

async function counter(url: string, name: string, reason: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name}\\{[^}]*reason="${reason}"[^}]*\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
}

describe("connections refused at accept, the gateway as a process", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGatewayProcess({ LOG_LEVEL: "info", HTTP_MAX_CONNECTIONS_PER_IP: String(CAP) }, "bundle");
  });
  afterAll(async () => {
    gw?.child.kill();
    await gw?.exited;
  });

  it("a banned IP reconnecting as fast as it can for 12 s: refusals counted, RSS flat once the ban has fired", { timeout: 60_000 }, async () => {
    const pid = gw.child.pid!;
    const port = Number(new URL(gw.url).port);
    const attacked = h2Attack(port, 12, "reset", "127.0.0.61");
    await new Promise((r) => setTimeout(r, 3_000));
    const [rssBanned, refusedBanned] = [rssOf(pid), await counter(gw.url, "gateway_connections_refused_at_accept_total", "h2_backoff")];
    const stats = await attacked;
    const [rssEnd, refusedEnd] = [rssOf(pid), await counter(gw.url, "gateway_connections_refused_at_accept_total", "h2_backoff")];
    const detail = `RSS ${(rssBanned / MB).toFixed(0)} -> ${(rssEnd / MB).toFixed(0)} MB; ${refusedEnd - refusedBanned} refused; ${JSON.stringify(stats)}`;
    expect(refusedBanned, detail).toBeGreaterThan(0);
    expect(refusedEnd - refusedBanned, detail).toBeGreaterThan(10_000);
    expect(rssEnd - rssBanned, detail).toBeLessThan(20 * MB);
  });

  it("an IP past its connection share reconnecting as fast as it can for 10 s: told 503 at first, then refused at accept (counted), RSS flat", {
    timeout: 60_000,
  }, async () => {
    const pid = gw.child.pid!;
    const port = Number(new URL(gw.url).port);
    const flooded = connectionFlood(port, 10, "127.0.0.62", CAP);
    await new Promise((r) => setTimeout(r, 2_500));
    // Past its share and reconnecting this fast, it is also past its new connections per second (counted so).
    const refused = async () =>
      (await counter(gw.url, "gateway_connections_refused_at_accept_total", "connection_cap")) +
      (await counter(gw.url, "gateway_connections_refused_at_accept_total", "connection_rate"));
    const [rssFlooded, refusedFlooded] = [rssOf(pid), await refused()];
    const stats = await flooded;
    const [rssEnd, refusedEnd] = [rssOf(pid), await refused()];
    const detail = `RSS ${(rssFlooded / MB).toFixed(0)} -> ${(rssEnd / MB).toFixed(0)} MB; ${refusedEnd - refusedFlooded} refused at accept; ${JSON.stringify(stats)}`;
    // Told why at first (and a few times each second after), closed unread for the rest.
    expect(stats.answered503, detail).toBeGreaterThan(0);
    expect(refusedEnd - refusedFlooded, detail).toBeGreaterThan(10_000);
    expect(rssEnd - rssFlooded, detail).toBeLessThan(20 * MB);
    // Another address is served meanwhile and after.
    const other = await fetch(gw.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
    });
    expect(other.status).toBe(200);
  });

  it("an IP that opens a connection per call, as fast as it can for 10 s: past 1,000 a second refused at accept (counted), RSS < 100 MB over", {
    timeout: 60_000,
  }, async () => {
    const pid = gw.child.pid!;
    const port = Number(new URL(gw.url).port);
    const [rssBefore, refusedBefore] = [rssOf(pid), await counter(gw.url, "gateway_connections_refused_at_accept_total", "connection_rate")];
    const stats = await connectionFlood(port, 10, "127.0.0.67", 0, true);
    const [rssEnd, refusedEnd] = [rssOf(pid), await counter(gw.url, "gateway_connections_refused_at_accept_total", "connection_rate")];
    const detail = `RSS ${(rssBefore / MB).toFixed(0)} -> ${(rssEnd / MB).toFixed(0)} MB; ${refusedEnd - refusedBefore} refused at accept; ${JSON.stringify(stats)}`;
    // Served at most 1,000 a second (each answered, 200 or 429), told 503 twenty times a second, the rest closed.
    expect(stats.answeredOther, detail).toBeLessThanOrEqual(11 * 1_000);
    expect(stats.answered503, detail).toBeGreaterThan(0);
    expect(refusedEnd - refusedBefore, detail).toBeGreaterThan(10_000);
    expect(rssEnd - rssBefore, detail).toBeLessThan(100 * MB);
  });
});
