// A key's webhook endpoints: registering (URL checked against server-side request forgery, events
// known, at most WEBHOOKS_PER_KEY), listing, removing, and an endpoint's deliveries (with replay). Only the
// key's own endpoints are ever seen or touched; another key's id is "not found".
import { randomUUID } from "node:crypto";
import { GatewayError, type JsonValue } from "../errors.js";
import { parseLogFilter } from "../live/parseLogFilter.js";
import type { DeliveryRow, WebhookRow, WebhookStore } from "../store/webhookStore.js";
import { newWebhookSecret } from "./webhookSignature.js";
import { checkTarget } from "./webhookTarget.js";

export const WEBHOOK_EVENTS = ["transaction.completed", "transaction.error", "log"] as const;

/** A "log" endpoint's filter as given: the logs subscription's {address, topics}. */
export type LogFilterInput = { address?: string[]; topics?: (string[] | null)[] };

export interface WebhookSettings {
  /** Endpoints one key may hold, across networks. */
  perKey: number;
  /** Targets on loopback, private and link-local addresses are allowed (development only). */
  allowPrivate: boolean;
  /** How long a rotated-out secret still signs (alongside the new one). */
  secretOverlapMs: number;
}

/** Whose endpoints: the key, its wallet (the signer of its writes), and the network called. */
export interface WebhookOwner {
  keyId: string;
  signer: string;
  network: string;
}

export class WebhookRegistry {
  constructor(
    private readonly store: WebhookStore,
    private readonly settings: WebhookSettings,
    /** Told when an endpoint is added or removed. */
    private readonly changed: () => void = () => undefined,
  ) {}

  async register(owner: WebhookOwner, url: unknown, events: unknown, logs?: LogFilterInput): Promise<{ webhook: WebhookRow; secret: string }> {
    const known = new Set<string>(WEBHOOK_EVENTS);
    const list: unknown[] = Array.isArray(events) ? events : [];
    if (list.length === 0 || !list.every((e) => typeof e === "string" && known.has(e)))
      throw new GatewayError("validation", `events must be a non-empty list of: ${WEBHOOK_EVENTS.join(", ")}`);
    // A "log" endpoint names its contracts: all of a busy chain's logs are no endpoint's business.
    const wantsLogs = list.includes("log");
    if (wantsLogs && !logs?.address?.length) throw new GatewayError("validation", 'a "log" endpoint needs logs: {"address": "0x…" or […], "topics"?: […]}');
    if (!wantsLogs && logs?.address?.length) throw new GatewayError("validation", 'logs is for a "log" endpoint: add "log" to events');
    const logFilter = wantsLogs ? JSON.stringify(parseLogFilter(logs as unknown as JsonValue)) : null;
    const target = await checkTarget(url, this.settings.allowPrivate);
    const held = await this.store.countByKey(owner.keyId);
    if (held >= this.settings.perKey)
      throw new GatewayError("limit_exceeded", `limit exceeded: at most ${this.settings.perKey} webhook endpoints per key; delete one first`, {
        details: { limit: this.settings.perKey, requested: held + 1 },
      });
    const secret = newWebhookSecret();
    const webhook = await this.store.insert({
      id: `wh_${randomUUID().replaceAll("-", "")}`,
      keyId: owner.keyId,
      network: owner.network,
      signer: owner.signer,
      url: target.href,
      events: [...new Set(list as string[])],
      secret,
      logFilter,
    });
    this.changed();
    return { webhook, secret };
  }

  list(owner: WebhookOwner): Promise<WebhookRow[]> {
    return this.store.listByKey(owner.keyId, owner.network);
  }

  async remove(owner: WebhookOwner, id: string): Promise<void> {
    await this.own(owner, id);
    await this.store.remove(id);
    this.changed();
  }

  async deliveries(owner: WebhookOwner, id: string, limit: number): Promise<DeliveryRow[]> {
    await this.own(owner, id);
    return this.store.deliveries(id, Math.min(Math.max(limit || 100, 1), 1_000));
  }

  async replay(owner: WebhookOwner, id: string, deliveryId: string): Promise<DeliveryRow> {
    await this.own(owner, id);
    const d = await this.store.replay(id, deliveryId);
    if (!d) throw new GatewayError("not_found", `no delivery ${deliveryId} of webhook ${id}`);
    this.changed();
    return d;
  }

  /** A new secret for the endpoint (shown this once); the old one signs alongside until the overlap ends. */
  async rotate(owner: WebhookOwner, id: string): Promise<{ secret: string; previousUntil: Date }> {
    await this.own(owner, id);
    const secret = newWebhookSecret();
    const previousUntil = new Date(Date.now() + this.settings.secretOverlapMs);
    await this.store.rotateSecret(id, secret, previousUntil);
    this.changed();
    return { secret, previousUntil };
  }

  private async own(owner: WebhookOwner, id: string): Promise<WebhookRow> {
    const w = await this.store.get(id);
    if (!w || w.keyId !== owner.keyId || w.network !== owner.network) throw new GatewayError("not_found", `no webhook ${id} of this key on this network`);
    return w;
  }
}
