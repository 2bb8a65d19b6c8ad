// A banned IP that keeps reconnecting is refused at accept thousands of times a second (#62). Each refusal
// once made a net.Socket that outlived a scavenge and kept its native handle until a full collection, so the
// gateway grew ~6 MB a second for as long as the attacker kept at it (+134 MB over 20 s). Now the refusal is
// made inside net's accept (its blockList), before a Socket exists. Measured on the gateway as its own
// process, RSS from /proc, from when the ban has fired to the attack's end.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { h2Attack } from "../../helpers/h2Attack.js";

const MB = 2 ** 20;
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

async function counter(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
}

describe("connections refused at accept, the gateway as a process", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGatewayProcess({ LOG_LEVEL: "info" }, "bundle");
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
    const [rssBanned, refusedBanned] = [rssOf(pid), await counter(gw.url, "gateway_connections_refused_at_accept_total")];
    const stats = await attacked;
    const [rssEnd, refusedEnd] = [rssOf(pid), await counter(gw.url, "gateway_connections_refused_at_accept_total")];
    const detail = `RSS ${(rssBanned / MB).toFixed(0)} -> ${(rssEnd / MB).toFixed(0)} MB; ${refusedEnd - refusedBanned} refused; ${JSON.stringify(stats)}`;
    expect(refusedBanned, detail).toBeGreaterThan(0);
    expect(refusedEnd - refusedBanned, detail).toBeGreaterThan(10_000);
    expect(rssEnd - rssBanned, detail).toBeLessThan(20 * MB);
  });
});
