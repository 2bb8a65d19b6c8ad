// Where webhooks are kept: a key's endpoints and their deliveries, in the journal's database (SQLite or
// PostgreSQL: webhookTables.ts). A delivery row is the outbox entry of one event for one endpoint, written by
// the journal in the same transaction as the status change that caused it; an endpoint is leased to one
// process at a time, which delivers its rows in `seq` order. This file is the shapes; the SQL is each database's.

export interface WebhookRow {
  id: string;
  keyId: string;
  /** The network name ("testnet"): its writes' events go to this endpoint. */
  network: string;
  /** The key's wallet: the signer of the writes whose outcomes are this endpoint's. */
  signer: string;
  url: string;
  events: string[];
  /** The HMAC secret deliveries are signed with (shown to the key holder once, at registration). */
  secret: string;
  /** A contract-event filter ({address, topics}) as JSON, for "log" events; null for none. */
  logFilter: string | null;
  /** The secret before the last rotation: it signs deliveries too until previousUntil. */
  previousSecret: string | null;
  previousUntil: Date | null;
  createdAt: Date;
  disabledAt: Date | null;
  disabledReason: string | null;
}

export type NewWebhook = Omit<WebhookRow, "createdAt" | "disabledAt" | "disabledReason" | "previousSecret" | "previousUntil">;

/** A secret and the one it replaced, valid until `previousUntil`. */
export interface RotatedSecret {
  secret: string;
  previousSecret: string | null;
  previousUntil: Date | null;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveryRow {
  /** Order of delivery within an endpoint. */
  seq: number;
  /** The event's id, unique, the same on every attempt (chain-gateway-event-id). */
  id: string;
  webhookId: string;
  event: string;
  queueId: string | null;
  errorMessage: string | null;
  /** The event's data when it was known as it happened (a log); transaction events read theirs when sent. */
  payload: string | null;
  /** Where this one goes instead of its endpoint's URL (a write's own callbackUrl). */
  url: string | null;
  createdAt: Date;
  status: DeliveryStatus;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
}

export interface WebhookStore {
  insert(row: NewWebhook): Promise<WebhookRow>;
  get(id: string): Promise<WebhookRow | undefined>;
  /** A key's endpoints on a network, oldest first. */
  listByKey(keyId: string, network: string): Promise<WebhookRow[]>;
  /** A key's endpoints on every network (the per-key limit). */
  countByKey(keyId: string): Promise<number>;
  /** Deletes the endpoint and its deliveries; false when there was none. */
  remove(id: string): Promise<boolean>;
  disable(id: string, reason: string): Promise<void>;
  /** An endpoint's deliveries, newest first. */
  deliveries(webhookId: string, limit: number): Promise<DeliveryRow[]>;
  /** Sends a delivery again (its id unchanged): pending, attempts from zero; undefined when unknown. */
  replay(webhookId: string, deliveryId: string): Promise<DeliveryRow | undefined>;
  /**
   * An event for an endpoint outside a status change (a log). `dedupe` names it: replicas that each saw it
   * write it once. Returns whether it was new.
   */
  enqueue(webhookId: string, event: string, payload: string, dedupe: string): Promise<boolean>;
  /** A network's active endpoints with a log filter (log events). */
  withLogFilters(network: string): Promise<WebhookRow[]>;
  /** Adds the endpoint unless one with its id exists (a key's callbacks endpoint). */
  ensure(row: NewWebhook): Promise<void>;
  /** The endpoint signs with `secret` from now on, its current one alongside until `previousUntil`. */
  rotateSecret(id: string, secret: string, previousUntil: Date): Promise<void>;
  /** A key's own callback secret, once rotated (before that it is derived: writeCallbacks.ts). */
  callbackSecret(keyId: string): Promise<RotatedSecret | undefined>;
  /** Sets a key's callback secret (`previous` the one it replaces) and rotates its callbacks endpoints to it. */
  rotateCallbackSecret(keyId: string, secret: RotatedSecret): Promise<void>;
  /** A write's outcome goes to `url` through endpoint `webhookId` (callbackUrl). */
  attachCallback(queueId: string, webhookId: string, url: string): Promise<void>;
  /** The events of a write's contract (an ABI's event entries, JSON), so its events can be decoded when sent. */
  rememberAbi(queueId: string, abi: string): Promise<void>;
  abiOf(queueId: string): Promise<string | undefined>;
  /** A write's outcome event for its callback, written once (its `dedupe` name); returns whether it was new. */
  enqueueOutcome(d: { webhookId: string; event: string; queueId: string; errorMessage: string | null; url: string; dedupe: string }): Promise<boolean>;
  /**
   * Up to `limit` endpoints of `network` with a pending delivery whose lease is free (or already `owner`'s),
   * leased to `owner` for `leaseMs`.
   */
  claim(network: string, owner: string, leaseMs: number, limit: number): Promise<WebhookRow[]>;
  /** Extends `owner`'s leases of these endpoints; returns those still held. */
  renew(ids: string[], owner: string, leaseMs: number): Promise<string[]>;
  release(id: string, owner: string): Promise<void>;
  /** The endpoint's oldest pending delivery. */
  nextPending(webhookId: string): Promise<DeliveryRow | undefined>;
  /** Deliveries of `network`'s active endpoints not yet delivered nor given up (the backlog), and the oldest one's age. */
  backlog(network: string): Promise<{ pending: number; oldestSeconds: number }>;
  delivered(deliveryId: string, status: number): Promise<void>;
  attempted(deliveryId: string, attempts: number, lastStatus: number | null, lastError: string): Promise<void>;
  failed(deliveryId: string, lastError: string): Promise<void>;
  /**
   * Deletes finished (delivered or failed) deliveries that ended, or were made, before `before`, in slices;
   * returns how many. Pending ones are never touched.
   */
  pruneFinished(before: Date): Promise<number>;
}

/** The event a journal status names, when it names one. */
export function eventOfStatus(status: string): string | undefined {
  return status === "completed" ? "transaction.completed" : status === "error" ? "transaction.error" : undefined;
}

/** A key's callbacks endpoint on a network (one per key and network: their deliveries keep write order). */
export const callbacksEndpointId = (keyId: string, network: string): string => `cb_${keyId}_${network}`;
/** The name of a write's outcome event for its callback: written once, by the status change or by the attach. */
export const callbackDedupe = (queueId: string, event: string): string => `cb:${queueId}:${event}`;

/** Kinds whose outcome is a caller's: the gateway's own no-ops and top-ups send no event. */
export const EVENT_KINDS = "('message', 'call', 'deploy', 'raw')";
