// Sends one network's webhook deliveries. The outbox rows are written with the status changes that cause
// them (the journal's); this leases endpoints that have some (one process per endpoint at a time, across
// replicas on one PostgreSQL) and sends each endpoint's rows in order, one at a time: a delivery is retried
// with backoff (p-retry: 1 s, doubling to a cap) until the receiver answers 2xx, answers 410 (the endpoint is
// disabled), or the give-up time (24 h) passes (the delivery is marked failed and the next one goes). Every
// endpoint has its own worker, so a slow or dead receiver delays nobody else, and writes never wait for any.
// A lease is renewed while held; a process that dies leaves it to lapse, and another takes the endpoint over.
import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import Bottleneck from "bottleneck";
import pRetry, { AbortError } from "p-retry";
import { Agent, request } from "undici";
import type { JsonValue } from "../errors.js";
import type { Logger } from "../log/logger.js";
import type { DeliveryRow, WebhookRow, WebhookStore } from "../store/webhookStore.js";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signature, signingSecrets } from "./webhookSignature.js";
import { isPrivateAddress, publicOnlyLookup } from "./webhookTarget.js";

export interface WebhookDispatcherOptions {
  network: string;
  store: WebhookStore;
  /** The event's `data` for a delivery (a transaction's outcome as it is now, a log as it came). */
  describe: (delivery: DeliveryRow) => Promise<JsonValue>;
  allowPrivate: boolean;
  log: Logger;
  /**
   * How often endpoints with work are looked for besides this process's own wake-ups: other replicas' events
   * (a shared store), or a claim that failed. 0: never.
   */
  pollMs?: number;
  leaseMs?: number;
  /** Endpoints delivered to at once by this process. */
  maxEndpoints?: number;
  /** Backoff between attempts: from firstRetryMs, doubling, at most maxRetryMs; a delivery is given up giveUpMs after its event. */
  firstRetryMs?: number;
  maxRetryMs?: number;
  giveUpMs?: number;
  /** Attempts per second to one key's endpoints together, at most (its events then queue in the outbox). */
  eventsPerSecond?: number;
  /** Per attempt: the whole exchange, and how much of the answer is read. */
  timeoutMs?: number;
  maxAnswerBytes?: number;
  observer?: { attempt(outcome: "delivered" | "failed" | "gone"): void };
}

/** The receiver said the endpoint is gone for good (410). */
class Gone extends Error {}

export class WebhookDispatcher {
  /** This process's lease name: a restart is another owner (its old leases lapse, or are cleared: SQLite). */
  private readonly owner = `${process.pid}-${randomUUID()}`;
  private readonly workers = new Map<string, AbortController>();
  /** Per key: its endpoints' pace (WEBHOOK_EVENTS_PER_SECOND), while some of them are being delivered to. */
  private readonly paces = new Map<string, { limiter: Bottleneck; workers: number }>();
  private agent: Agent;
  private readonly pollTimer: NodeJS.Timeout | undefined;
  private readonly renewTimer: NodeJS.Timeout;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly o: Required<Omit<WebhookDispatcherOptions, "observer">> & Pick<WebhookDispatcherOptions, "observer">;

  constructor(options: WebhookDispatcherOptions) {
    this.o = {
      pollMs: 500,
      leaseMs: 15_000,
      maxEndpoints: 64,
      firstRetryMs: 1_000,
      maxRetryMs: 300_000,
      giveUpMs: 86_400_000,
      timeoutMs: 5_000,
      eventsPerSecond: 50,
      maxAnswerBytes: 64 * 1024,
      ...options,
    };
    this.agent = agentFor(this.o.allowPrivate);
    if (this.o.pollMs > 0) {
      this.pollTimer = setInterval(() => this.wake(), this.o.pollMs);
      this.pollTimer.unref();
    }
    this.renewTimer = setInterval(() => void this.renew(), Math.max(500, this.o.leaseMs / 3));
    this.renewTimer.unref();
  }

  /** New deliveries may be waiting (this process wrote some, or the poll): look now. */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((err: unknown) => this.o.log.warn("webhook endpoints could not be claimed; retried", { error: (err as Error).message }))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Settings from a reloaded configuration: the next attempts run by them (a key's pace at once). */
  reconfigure(next: Pick<WebhookDispatcherOptions, "allowPrivate" | "maxRetryMs" | "giveUpMs" | "eventsPerSecond">): void {
    const allowPrivateChanged = next.allowPrivate !== this.o.allowPrivate;
    Object.assign(this.o, next);
    for (const p of this.paces.values()) p.limiter.updateSettings({ minTime: Math.ceil(1_000 / this.o.eventsPerSecond) });
    if (allowPrivateChanged) {
      // Deliveries under way finish on the agent they started on.
      const old = this.agent;
      this.agent = agentFor(this.o.allowPrivate);
      void old.close().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.renewTimer);
    for (const c of this.workers.values()) c.abort();
    await this.ticking;
    await this.agent.close().catch(() => undefined);
  }

  private async tick(): Promise<void> {
    const room = this.o.maxEndpoints - this.workers.size;
    if (room <= 0) return;
    const endpoints = await this.o.store.claim(this.o.network, this.owner, this.o.leaseMs, room);
    for (const e of endpoints) if (!this.workers.has(e.id)) this.work(e);
  }

  private async renew(): Promise<void> {
    const held = [...this.workers.keys()];
    if (held.length === 0) return;
    const still = new Set(await this.o.store.renew(held, this.owner, this.o.leaseMs).catch(() => held));
    // A lease lost (this process stalled past it, or the endpoint was disabled or removed): stop its worker.
    for (const id of held) if (!still.has(id)) this.workers.get(id)?.abort();
  }

  /** Sends an endpoint's pending deliveries in order until none is left, then lets the endpoint go. */
  private work(endpoint: WebhookRow): void {
    const control = new AbortController();
    this.workers.set(endpoint.id, control);
    const pace = this.paceOf(endpoint.keyId);
    void (async () => {
      try {
        for (;;) {
          if (control.signal.aborted) return;
          const next = await this.o.store.nextPending(endpoint.id);
          if (!next) return;
          if ((await this.deliver(endpoint, next, control.signal, pace)) === "stop") return;
        }
      } catch (err) {
        if (!control.signal.aborted)
          this.o.log.warn("webhook worker stopped; its endpoint is taken up again", { webhook: endpoint.id, error: (err as Error).message });
      } finally {
        this.leavePace(endpoint.keyId);
        this.workers.delete(endpoint.id);
        await this.o.store.release(endpoint.id, this.owner).catch(() => undefined);
        // Something may have arrived between the last look and the release.
        this.wake();
      }
    })();
  }

  /**
   * A key's pace, shared by its endpoints' workers in this process: at most eventsPerSecond attempts a second
   * (bottleneck spaces their starts; one slow receiver holds no other, as starts are not serialised).
   */
  private paceOf(keyId: string): Bottleneck {
    let p = this.paces.get(keyId);
    if (!p) this.paces.set(keyId, (p = { limiter: new Bottleneck({ minTime: Math.ceil(1_000 / this.o.eventsPerSecond) }), workers: 0 }));
    p.workers++;
    return p.limiter;
  }

  private leavePace(keyId: string): void {
    const p = this.paces.get(keyId);
    if (!p || --p.workers > 0) return;
    this.paces.delete(keyId);
    void p.limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
  }

  /** One delivery, retried until it is delivered, given up, or the endpoint is gone; "stop" ends the endpoint's turn. */
  private async deliver(endpoint: WebhookRow, d: DeliveryRow, signal: AbortSignal, pace: Bottleneck): Promise<"next" | "stop"> {
    let data: JsonValue | undefined;
    let lastStatus: number | null = null;
    const left = Math.max(0, d.createdAt.getTime() + this.o.giveUpMs - Date.now());
    try {
      await pRetry(
        async () => {
          try {
            data ??= await this.o.describe(d);
            const body = JSON.stringify({ id: d.id, type: d.event, createdAt: d.createdAt.toISOString(), network: this.o.network, data });
            lastStatus = await pace.schedule(() => this.post(d.url ?? endpoint.url, body, signingSecrets(endpoint), d.id, signal));
          } catch (err) {
            // Plain errors only: p-retry gives up at once on a TypeError that is not a network error.
            throw new Error((err as Error).message);
          }
          if (lastStatus === 410) throw new AbortError(new Gone("the receiver answered 410 Gone"));
          if (lastStatus < 200 || lastStatus >= 300) throw new Error(`the receiver answered ${lastStatus}`);
        },
        {
          retries: Number.POSITIVE_INFINITY,
          factor: 2,
          minTimeout: this.o.firstRetryMs,
          maxTimeout: this.o.maxRetryMs,
          randomize: false,
          maxRetryTime: left,
          signal,
          onFailedAttempt: async ({ error, attemptNumber }) => {
            this.o.observer?.attempt("failed");
            await this.o.store.attempted(d.id, d.attempts + attemptNumber, lastStatus, error.message.slice(0, 500)).catch(() => undefined);
            lastStatus = null;
          },
        },
      );
    } catch (err) {
      if (signal.aborted) return "stop";
      if (err instanceof Gone) {
        this.o.observer?.attempt("gone");
        this.o.log.warn("webhook endpoint disabled: the receiver answered 410 Gone", { webhook: endpoint.id });
        await this.o.store.disable(endpoint.id, err.message);
        return "stop";
      }
      this.o.log.warn("webhook delivery given up", { webhook: endpoint.id, delivery: d.id, error: (err as Error).message });
      await this.o.store.failed(d.id, (err as Error).message.slice(0, 500));
      return "next";
    }
    this.o.observer?.attempt("delivered");
    await this.o.store.delivered(d.id, lastStatus ?? 200);
    return "next";
  }

  /** One attempt: the receiver's status (at most maxAnswerBytes of its answer read). */
  private async post(url: string, body: string, secret: string[], eventId: string, signal: AbortSignal): Promise<number> {
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, "");
    if (!this.o.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) throw new Error(`${host} is a private address`);
    const res = await request(target, {
      method: "POST",
      dispatcher: this.agent,
      body,
      headers: {
        "content-type": "application/json",
        "user-agent": "chain-gateway-webhooks",
        [EVENT_ID_HEADER]: eventId,
        [SIGNATURE_HEADER]: signature(secret, body, Math.floor(Date.now() / 1000)),
      },
      signal: AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]),
      headersTimeout: this.o.timeoutMs,
      bodyTimeout: this.o.timeoutMs,
    });
    let read = 0;
    for await (const chunk of res.body) {
      read += (chunk as Buffer).length;
      if (read > this.o.maxAnswerBytes) {
        res.body.destroy();
        break;
      }
    }
    return res.statusCode;
  }
}

/** No redirects are followed (undici's request follows none); without allowPrivate, names resolve to public addresses only. */
function agentFor(allowPrivate: boolean): Agent {
  return new Agent({ connect: allowPrivate ? {} : { lookup: publicOnlyLookup }, keepAliveTimeout: 10_000, connections: 4 });
}
