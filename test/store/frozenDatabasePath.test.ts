// The TCP path to PostgreSQL frozen (#63): a proxy between the gateway and its journal stopped with SIGSTOP for
// 20 s, under ZKT load. Nothing is reset, nothing answers: node-postgres waited for ever, 16 writes hung until
// their clients gave up at 20 s (and were mined anyway), /readyz said 200 for ~14 s. Now a store call has a
// deadline: writes in flight are answered 503 within 5 s, /readyz is false within 3 s, and every acknowledged
// write is mined once; a 503 whose journal row did commit says so, and that write is mined once too.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { journalOf, postJson, rpc, startTestGateway } from "../helpers/gateway.js";
import { freshSchemaUrl, PG_BASE } from "../helpers/postgres.js";
import { until } from "../helpers/until.js";

async function startProxy(target: URL): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../helpers/tcpProxy.mjs", import.meta.url)), target.hostname, target.port || "5432"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once("exit", () => reject(new Error("proxy exited")));
  });
  return { child, port };
}

describe("the path to PostgreSQL frozen", () => {
  let schema: Awaited<ReturnType<typeof freshSchemaUrl>> | undefined;
  let proxy: { child: ChildProcess; port: number } | undefined;
  let gw: Gateway | undefined;
  afterAll(async () => {
    proxy?.child.kill("SIGCONT");
    await gw?.close();
    proxy?.child.kill("SIGKILL");
    await schema?.drop();
  });

  it("20 s under load: in-flight writes 503 within 5 s, /readyz false within 3 s, every acknowledged write mined once", { timeout: 150_000 }, async () => {
    schema = await freshSchemaUrl();
    proxy = await startProxy(new URL(PG_BASE));
    const viaProxy = new URL(schema.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    gw = await startTestGateway({
      mutate: (c) => {
        c.databaseUrl = viaProxy.toString();
        c.rateLimit.requestsPerWindow = 1_000_000;
      },
    });
    const url = gw.network("testnet").url;
    const apiKey = ((await postJson(`${url}/portal/keys`, { label: "frozen" })).json as { apiKey: string }).apiKey;
    const acknowledged: { hash: string; queueId: string }[] = [];
    /** Writes answered 503 whose journal row committed all the same (the answer's queueId says which). */
    const maybeRecorded: string[] = [];
    /** Each answer during the freeze: how long it took. */
    const frozenAnswers: { ms: number; status: number }[] = [];
    let frozenAt = 0;
    let thawedAt = 0;
    let running = true;
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const t0 = Date.now();
        const res = await postJson(`${url}/zkt/${apiKey}`, { arguments: `frozen ${n}/${i}` }).catch(() => ({ status: 0, json: undefined }));
        if (frozenAt && t0 >= frozenAt - 100 && (!thawedAt || t0 < thawedAt)) frozenAnswers.push({ ms: Date.now() - t0, status: res.status });
        if (res.status === 200) acknowledged.push(res.json as { hash: string; queueId: string });
        else {
          const body = res.json as { details?: { recorded?: string; queueId?: string } } | undefined;
          if (res.status === 503 && body?.details?.queueId) maybeRecorded.push(body.details.queueId);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, n) => client(n));
    await until(() => acknowledged.length >= 100, 30_000);

    frozenAt = Date.now();
    proxy.child.kill("SIGSTOP");
    await until(async () => (await fetch(`${url}/readyz`)).status === 503, 10_000);
    const notReadyMs = Date.now() - frozenAt;
    await new Promise((r) => setTimeout(r, Math.max(0, 20_000 - (Date.now() - frozenAt))));
    thawedAt = Date.now();
    proxy.child.kill("SIGCONT");
    await until(async () => (await fetch(`${url}/readyz`)).status === 200, 15_000);
    const countAtThaw = acknowledged.length;
    await until(() => acknowledged.length > countAtThaw + 20, 15_000);
    running = false;
    await Promise.all(clients);

    expect(notReadyMs, "readiness false within 3 s of the freeze").toBeLessThan(3_000);
    expect(frozenAnswers.length).toBeGreaterThan(0);
    const slowest = Math.max(...frozenAnswers.map((a) => a.ms));
    expect(slowest, `every write during the freeze answered within 5 s (statuses ${[...new Set(frozenAnswers.map((a) => a.status))]})`).toBeLessThan(5_000);
    expect(frozenAnswers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);

    // Every acknowledged write is mined once; so is every 503 whose row committed (it is journaled: it is sent).
    const node = gw.network("testnet").upstreamUrls[0]!;
    const store = journalOf(gw);
    const recorded = (await Promise.all(maybeRecorded.map((id) => store.get(id)))).filter((r) => r !== undefined);
    const hashes = [...acknowledged.map((a) => a.hash), ...recorded.map((r) => r.hash)];
    const unmined = async () => {
      const left: string[] = [];
      for (const h of hashes) if (!(await rpc(node, "eth_getTransactionReceipt", [h]))) left.push(h);
      return left;
    };
    await until(async () => (await unmined()).length === 0, 60_000);
    expect(new Set(hashes).size).toBe(hashes.length);
    console.log(
      `frozen path: ${acknowledged.length} acknowledged, ${frozenAnswers.length} answers during the freeze (slowest ${slowest} ms), readiness false after ${notReadyMs} ms, ${maybeRecorded.length} answered "may have been recorded" (${recorded.length} were)`,
    );
  });
});
