// The gauges the dashboard's "writes waiting, webhook backlog" row and two alerts read (#67): the webhook
// backlog (deliveries not yet made, and the oldest one's age), and the age of the oldest unfinished write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { type ProxiedChain, proxiedChain } from "../helpers/proxiedChain.js";
import { until } from "../helpers/until.js";
import { type Receiver, startReceiver } from "../helpers/webhookReceiver.js";

const gauge = (text: string, name: string): number => Number(new RegExp(`${name}\\{network="testnet"\\} ([\\d.e+-]+)`).exec(text)?.[1] ?? Number.NaN);

describe("backlog gauges", () => {
  let chain: ProxiedChain;
  let proxy: FaultyUpstream;
  let receiver: Receiver;
  let base: string;
  beforeAll(async () => {
    chain = await proxiedChain();
    proxy = chain.proxies[0]!;
    receiver = await startReceiver();
    receiver.answer = () => 500;
    const gw = (chain.gateway = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.networks[0]!.blockTimeSeconds = 0.25;
        c.webhooks.allowPrivate = true;
        c.stuckTransactionMs = 3_000;
        c.droppedSendMs = 1_000;
      },
    }));
    base = gw.network("testnet").url;
  });
  afterAll(async () => {
    await chain?.close();
    receiver?.close();
  });
  const metrics = async (): Promise<string> => (await fetch(`${base}/metrics`)).text();

  it("a delivery its receiver keeps refusing is in the webhook backlog, with its age", { timeout: 60_000 }, async () => {
    const apiKey = ((await postJson(`${base}/portal/keys`, { label: "backlog" })).json as { apiKey: string }).apiKey;
    const hook = await postJson(`${base}/zgt/${apiKey}/webhooks`, { url: receiver.url, events: ["transaction.completed"] });
    expect(hook.status, hook.text).toBe(201);
    expect(gauge(await metrics(), "gateway_webhook_backlog")).toBe(0);
    const write = await postJson(`${base}/zkt/${apiKey}`, { arguments: "backlog", wait: true });
    expect(write.status, write.text).toBe(200);
    await until(async () => gauge(await metrics(), "gateway_webhook_backlog") >= 1, 20_000);
    await until(async () => receiver.got.length >= 1, 20_000);
    await until(async () => gauge(await metrics(), "gateway_webhook_oldest_pending_seconds") > 0, 10_000);
  });

  it("a write the node keeps dropping ages in gateway_oldest_unfinished_write_seconds, and drops out once mined", { timeout: 90_000 }, async () => {
    proxy.dropSends(1);
    const write = await postJson(`${base}/zkt/try-it-out`, { arguments: "waiting" });
    expect(write.status, write.text).toBe(200);
    await until(async () => gauge(await metrics(), "gateway_oldest_unfinished_write_seconds") > 0, 30_000);
    proxy.dropSends(0);
    await until(async () => gauge(await metrics(), "gateway_oldest_unfinished_write_seconds") === 0, 45_000);
  });
});
