// WebhookService (webhooks.proto): a key's endpoints on the network called. The guard has checked the key
// (policy/operations.ts: auth required); the registry keeps a key to its own endpoints.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { DeliverySchema, WebhookSchema, WebhookService } from "../../gen/chaingateway/webhooks/v1/webhooks_pb.js";
import { GatewayError } from "../errors.js";
import type { Access } from "../keys/access.js";
import type { DeliveryRow, WebhookRow } from "../store/webhookStore.js";
import type { WebhookOwner, WebhookRegistry } from "../webhooks/webhookRegistry.js";
import { accessKey } from "./context.js";
import type { LogFilter } from "../live/logFilter.js";

export function webhookHandlers(
  registry: WebhookRegistry,
  network: string,
  /** The key's wallet address (the signer of its writes). */
  walletOf: (access: Extract<Access, { kind: "key" }>) => string,
  /** A key's callback secret, and its rotation (webhooks/writeCallbacks.ts). */
  callbacks: { secretOf(keyId: string): Promise<string>; rotate(keyId: string): Promise<{ secret: string; previousUntil: Date }> },
): ServiceImpl<typeof WebhookService> {
  const owner = (ctx: HandlerContext): WebhookOwner => {
    const access = ctx.values.get(accessKey);
    if (access.kind !== "key") throw new GatewayError("unauthorized", "webhooks are a key's: call with an API key");
    return { keyId: access.keyId, signer: walletOf(access), network };
  };
  return {
    async registerWebhook(req, ctx) {
      const logs = req.logs ? { address: req.logs.addresses, topics: req.logs.topics.map((t) => (t.anyOf.length > 0 ? t.anyOf : null)) } : undefined;
      const { webhook, secret } = await registry.register(owner(ctx), req.url, req.events, logs);
      return { webhook: webhookOut(webhook), secret };
    },
    async listWebhooks(_req, ctx) {
      return { webhooks: (await registry.list(owner(ctx))).map(webhookOut) };
    },
    async deleteWebhook(req, ctx) {
      await registry.remove(owner(ctx), req.id);
      return {};
    },
    async listDeliveries(req, ctx) {
      return { deliveries: (await registry.deliveries(owner(ctx), req.webhookId, req.limit)).map(deliveryOut) };
    },
    async replayDelivery(req, ctx) {
      return { delivery: deliveryOut(await registry.replay(owner(ctx), req.webhookId, req.deliveryId)) };
    },
    async getCallbackSecret(_req, ctx) {
      return { secret: await callbacks.secretOf(owner(ctx).keyId) };
    },
    async rotateWebhookSecret(req, ctx) {
      const { secret, previousUntil } = await registry.rotate(owner(ctx), req.id);
      return { secret, previousValidUntil: previousUntil.toISOString() };
    },
    async rotateCallbackSecret(_req, ctx) {
      const { secret, previousUntil } = await callbacks.rotate(owner(ctx).keyId);
      return { secret, previousValidUntil: previousUntil.toISOString() };
    },
  };
}

function webhookOut(w: WebhookRow): MessageInitShape<typeof WebhookSchema> {
  const filter = w.logFilter ? (JSON.parse(w.logFilter) as LogFilter) : undefined;
  return {
    ...(filter ? { logs: { addresses: filter.addresses ?? [], topics: (filter.topics ?? []).map((t) => ({ anyOf: t ?? [] })) } } : {}),
    id: w.id,
    url: w.url,
    events: w.events,
    createdAt: w.createdAt.toISOString(),
    disabledAt: w.disabledAt?.toISOString() ?? "",
    disabledReason: w.disabledReason ?? "",
  };
}

function deliveryOut(d: DeliveryRow): MessageInitShape<typeof DeliverySchema> {
  return {
    id: d.id,
    event: d.event,
    queueId: d.queueId ?? "",
    status: d.status,
    attempts: d.attempts,
    lastStatus: d.lastStatus ?? 0,
    lastError: d.lastError ?? "",
    createdAt: d.createdAt.toISOString(),
    deliveredAt: d.deliveredAt?.toISOString() ?? "",
  };
}
