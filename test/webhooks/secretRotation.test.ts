// Rotating secrets (#66): an endpoint's secret (POST /zgt/<key>/webhooks/<id>/rotate-secret) and a key's
// callback secret (POST /zgt/<key>/webhooks/callback-secret/rotate, or the admin API's RotateCallbackSecret)
// rotate on their own: deliveries are signed with the new secret at once, and with the old one alongside it
// (a second v1) until the overlap ends, so a receiver still holding the old one loses nothing; after it, the
// old one no longer verifies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { adminClient } from "../helpers/adminClient.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";
import { type Received, type Receiver, signatureCount, startReceiver, verifySignature } from "../helpers/webhookReceiver.js";

const OVERLAP_MS = 4_000;
const ADMIN = "rotation-admin-token-0123456789abcdef";

describe("rotating webhook and callback secrets", () => {
  let gw: Gateway;
  let base: string;
  let receiver: Receiver;
  let apiKey: string;
  let keyId: string;
  beforeAll(async () => {
    receiver = await startReceiver();
    gw = await startTestGateway({
      mutate: (c) => {
        c.webhooks.allowPrivate = true;
        c.webhooks.secretOverlapMs = OVERLAP_MS;
        c.adminTokens = [`ops:${ADMIN}`];
      },
    });
    base = gw.network("testnet").url;
    const created = await gw.keys.create();
    apiKey = created.apiKey;
    keyId = created.info.id;
  });
  afterAll(async () => {
    await gw?.close();
    receiver?.close();
  });

  /** A write's delivery (its endpoint's event, or its own callback), once it has come. */
  async function deliveryOf(body: Record<string, unknown>): Promise<Received> {
    const { queueId } = (await postJson(`${base}/zkt/${apiKey}`, body)).json as { queueId: string };
    await until(() => receiver.got.some((g) => g.json.data.queueId === queueId), 15_000);
    return receiver.got.find((g) => g.json.data.queueId === queueId)!;
  }
  const header = (g: Received) => g.headers["chain-gateway-signature"] as string;

  it("an endpoint's secret: the new one signs at once, the old one alongside until the overlap ends", { timeout: 60_000 }, async () => {
    const reg = await postJson(`${base}/zgt/${apiKey}/webhooks`, { url: receiver.url, events: ["transaction.completed"] });
    const { id, secret: first } = reg.json as { id: string; secret: string };
    const before = await deliveryOf({ arguments: "before the rotation" });
    expect(verifySignature(header(before), before.body, first)).toBe(true);
    expect(signatureCount(header(before))).toBe(1);

    const rotated = await postJson(`${base}/zgt/${apiKey}/webhooks/${id}/rotate-secret`, {});
    expect(rotated.status, rotated.text).toBe(200);
    const { secret: second, previousValidUntil } = rotated.json as { secret: string; previousValidUntil: string };
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect(Date.parse(previousValidUntil) - Date.now()).toBeGreaterThan(OVERLAP_MS - 2_000);

    const during = await deliveryOf({ arguments: "during the overlap" });
    expect(signatureCount(header(during))).toBe(2);
    expect(verifySignature(header(during), during.body, second)).toBe(true);
    expect(verifySignature(header(during), during.body, first)).toBe(true);

    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(previousValidUntil) - Date.now()) + 200));
    const after = await deliveryOf({ arguments: "after the overlap" });
    expect(signatureCount(header(after))).toBe(1);
    expect(verifySignature(header(after), after.body, second)).toBe(true);
    expect(verifySignature(header(after), after.body, first)).toBe(false);
    // Another key cannot rotate it.
    const other = await gw.keys.create();
    expect((await postJson(`${base}/zgt/${other.apiKey}/webhooks/${id}/rotate-secret`, {})).status).toBe(404);
    await fetch(`${base}/zgt/${apiKey}/webhooks/${id}`, { method: "DELETE" });
  });

  it("the key's callback secret: rotated by the key holder, then by an operator, each overlapping the one before", { timeout: 60_000 }, async () => {
    const secretNow = async () => ((await (await fetch(`${base}/zgt/${apiKey}/webhooks/callback-secret`)).json()) as { secret: string }).secret;
    const first = await secretNow();
    const before = await deliveryOf({ arguments: "callback before", callbackUrl: receiver.url });
    expect(verifySignature(header(before), before.body, first)).toBe(true);

    const rotated = await postJson(`${base}/zgt/${apiKey}/webhooks/callback-secret/rotate`, {});
    expect(rotated.status, rotated.text).toBe(200);
    const second = (rotated.json as { secret: string }).secret;
    expect(await secretNow()).toBe(second);
    const during = await deliveryOf({ arguments: "callback during", callbackUrl: receiver.url });
    expect(signatureCount(header(during))).toBe(2);
    expect(verifySignature(header(during), during.body, second)).toBe(true);
    expect(verifySignature(header(during), during.body, first)).toBe(true);

    // An operator rotates it (a leaked secret): the admin API answers the new one for the key holder.
    const admin = adminClient(base, ADMIN);
    const third = (await admin.rotateCallbackSecret({ id: keyId })).secret;
    expect(await secretNow()).toBe(third);
    const next = await deliveryOf({ arguments: "callback after the operator's", callbackUrl: receiver.url });
    expect(verifySignature(header(next), next.body, third)).toBe(true);
    expect(verifySignature(header(next), next.body, second)).toBe(true);
    expect(verifySignature(header(next), next.body, first)).toBe(false);
  });
});
