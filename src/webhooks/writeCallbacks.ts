// A ZKT write's own callbackUrl: its outcome is POSTed there, signed with the key's callback secret. The
// URL is checked before anything is signed (as a webhook's); once the write is journaled it is attached, through
// the key's callbacks endpoint on the network (one per key: its callbacks keep their writes' order). The
// status change writes the event with the other outbox rows; a write whose outcome came before the attach
// (a node refusing it at once) gets the event from the attach itself, and the dedupe name makes it one either way.
import { ttlCache } from "../ttlCache.js";
import { createHash, createHmac } from "node:crypto";
import { GatewayError } from "../errors.js";
import type { Access } from "../keys/access.js";
import type { SubmissionStore } from "../store/submissionStore.js";
import { callbackDedupe, callbacksEndpointId, eventOfStatus, type WebhookStore } from "../store/webhookStore.js";
import { newWebhookSecret } from "./webhookSignature.js";
import { checkTarget } from "./webhookTarget.js";

export interface WriteCallbackOptions {
  network: string;
  store: WebhookStore;
  journal: Pick<SubmissionStore, "get">;
  allowPrivate: boolean;
  /** The key's wallet address (the signer of its writes). */
  walletOf(access: Extract<Access, { kind: "key" }>): string;
  /** Secret material only this gateway (and its replicas) hold: the callback secrets derive from it. */
  seedSecret: string;
  /** How long a rotated-out callback secret still signs. */
  secretOverlapMs: number;
  /** Rows were written: the dispatcher looks. */
  written(): void;
}

/** How long a key's "has endpoints here" is believed (a write right after a registration may go undecoded). */
const ENDPOINTS_KNOWN_MS = 1_000;

export class WriteCallbacks {
  private readonly secretKey: Buffer;
  /** Per key: whether it has endpoints on this network (believed for ENDPOINTS_KNOWN_MS). */
  private readonly endpoints = ttlCache<string, { has: boolean }>(10_000, ENDPOINTS_KNOWN_MS);

  constructor(private readonly options: WriteCallbackOptions) {
    this.secretKey = createHash("sha256").update(`${options.seedSecret}:webhook-callbacks`).digest();
  }

  /**
   * A key's callback secret: the same on every replica and network. Derived from the custody's secret until the
   * key rotates it; then its own random one, kept in the store.
   */
  async secretOf(keyId: string): Promise<string> {
    return (await this.options.store.callbackSecret(keyId))?.secret ?? this.derived(keyId);
  }

  private derived(keyId: string): string {
    return `whsec_${createHmac("sha256", this.secretKey).update(keyId).digest("base64url")}`;
  }

  /** A new callback secret for the key (shown this once); the old one signs alongside until the overlap ends. */
  async rotate(keyId: string): Promise<{ secret: string; previousUntil: Date }> {
    const previousSecret = await this.secretOf(keyId);
    const secret = newWebhookSecret();
    const previousUntil = new Date(Date.now() + this.options.secretOverlapMs);
    await this.options.store.rotateCallbackSecret(keyId, { secret, previousSecret, previousUntil });
    this.options.written();
    return { secret, previousUntil };
  }

  async check(access: Access, url: string): Promise<void> {
    if (access.kind !== "key") throw new GatewayError("validation", "callbackUrl needs an API key: its callbacks are signed with the key's callback secret");
    await checkTarget(url, this.options.allowPrivate);
  }

  /**
   * Keeps a write's contract events (its ABI's event entries) for decoding its receipt's logs when its event is
   * sent: only for a write whose outcome goes somewhere (its own callback, or its key's endpoints).
   */
  async rememberAbi(access: Access, queueId: string, callbackUrl: string | undefined, events: () => string): Promise<void> {
    if (access.kind !== "key") return;
    if (callbackUrl === undefined && !(await this.hasEndpoints(access.keyId))) return;
    await this.options.store.rememberAbi(queueId, events());
  }

  private async hasEndpoints(keyId: string): Promise<boolean> {
    const known = this.endpoints.get(keyId);
    if (known) return known.has;
    const has = (await this.options.store.listByKey(keyId, this.options.network)).length > 0;
    this.endpoints.set(keyId, { has });
    return has;
  }

  async attach(access: Extract<Access, { kind: "key" }>, queueId: string, url: string): Promise<void> {
    const { store, network } = this.options;
    const webhookId = callbacksEndpointId(access.keyId, network);
    await store.ensure({
      id: webhookId,
      keyId: access.keyId,
      network,
      signer: this.options.walletOf(access),
      url,
      // Not an event list any status change matches by signer: only attached writes come here.
      events: ["callback"],
      secret: await this.secretOf(access.keyId),
      logFilter: null,
    });
    await store.attachCallback(queueId, webhookId, url);
    // An outcome that came before the attach: the status change found no callback to write for.
    const rec = await this.options.journal.get(queueId);
    const event = rec ? eventOfStatus(rec.status) : undefined;
    if (
      rec &&
      event &&
      (await store.enqueueOutcome({ webhookId, event, queueId, errorMessage: rec.errorMessage ?? null, url, dedupe: callbackDedupe(queueId, event) }))
    )
      this.options.written();
  }
}
