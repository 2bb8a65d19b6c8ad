// The policy every operation runs under, whatever transport carried it: authentication, rate limits, the
// daily quota and idempotency, as the operation's entry in OPERATIONS says. Transports only say who called
// (the key as presented, the client IP, an idempotency key) and render what comes back.
import { GatewayError } from "../errors.js";
import type { Access, Authenticate } from "../keys/access.js";
import { rateLimitHeaders, type RateLimits } from "../limits/rateLimits.js";
import { MAX_IDEMPOTENCY_KEY_LENGTH, type ClaimHooks, type IdempotencyStore } from "../store/idempotencyStore.js";
import { andThen, type MaybePromise } from "../maybePromise.js";
import { OPERATIONS, type OperationName } from "./operations.js";
import type { AdminTokens } from "../keys/adminTokens.js";

export type { Authenticate } from "../keys/access.js";

/** Who called, as the transport saw it. */
export interface Caller {
  /** The API key as presented (a path segment, a Bearer token); undefined for public access. */
  apiKey?: string | undefined;
  clientIp: string;
  /** The caller's idempotency key (a header or a request field), if any. */
  idempotencyKey?: string | undefined;
  /** The transport, when the handler context does not say it (a WebSocket message runs in process). */
  transport?: string;
}

export interface Admission {
  access: Access;
  /** An admin operation's caller: the name of the admin token presented. */
  admin?: string;
  /** X-RateLimit-* headers for the answer. */
  headers: Record<string, string>;
}

/** How an operation's value is kept for replays (text in the store) and read back. */
export interface Codec<T> {
  encode(value: T): string;
  decode(text: string): T;
}

export interface PolicyDeps {
  network: string;
  authenticate: Authenticate;
  /** Admin operations' tokens (none configured: every admin call is refused). */
  adminTokens?: AdminTokens;
  limits: RateLimits;
  idempotency: IdempotencyStore;
}

const PUBLIC: Access = { kind: "public" };
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export class Policy {
  constructor(private readonly deps: PolicyDeps) {}

  /** The network this policy admits callers of. */
  get network(): string {
    return this.deps.network;
  }

  /**
   * Authentication and rate limits for `weight` requests of an operation. At once (no promise) when nothing
   * waits: a public caller and a local limiter, the hot path of POST /.
   */
  admit(op: OperationName, caller: Caller, requested = 1): MaybePromise<Admission> {
    const rule = OPERATIONS[op];
    const weight = rule.free ? 0 : requested;
    if (rule.auth === "admin") return this.admitAdmin(op, caller, weight);
    if (caller.apiKey === undefined) {
      if (rule.auth === "required") throw new GatewayError("unauthorized", "this operation needs an API key");
      return this.limit(op, PUBLIC, caller.clientIp, weight);
    }
    return this.deps.authenticate(caller.apiKey).then(
      (access) => this.limit(op, access, caller.clientIp, weight),
      (err: unknown) => this.refusedKey(caller.clientIp, weight, err),
    );
  }

  /**
   * A key that does not authenticate is refused, and the refusal costs its IP's request limit as a public call
   * would: guessing keys is rate limited like any other request (past the limit the answer is the 429).
   */
  private async refusedKey(clientIp: string, weight: number, err: unknown): Promise<never> {
    if (err instanceof GatewayError && err.kind === "unauthorized") await this.limit("RpcService.Call", PUBLIC, clientIp, weight);
    throw err;
  }

  /**
   * Counted against the caller's IP on the admin budget first (its own, not the API's request limit), so
   * guessing tokens is rate limited without locking the IP's API callers out.
   */
  private admitAdmin(_op: OperationName, caller: Caller, _weight: number): MaybePromise<Admission> {
    const { limits, network } = this.deps;
    return andThen(limits.checkAdminAttempt(network, caller.clientIp), (d) => {
      const admin = this.deps.adminTokens?.nameOf(caller.apiKey);
      if (admin === undefined)
        throw new GatewayError("unauthorized", caller.apiKey === undefined ? "the admin API needs authorization: Bearer <ADMIN_TOKEN>" : "not an admin token");
      return { access: PUBLIC, admin, headers: d ? rateLimitHeaders(d) : NO_HEADERS };
    });
  }

  /**
   * A request that reaches no handler (malformed: bad JSON, an invalid request or batch entry; or to no
   * endpoint) still counts: as `weight` JSON-RPC calls of its caller, the rule of RpcService.Call.
   */
  admitUnhandled(caller: Caller, weight = 1): MaybePromise<Admission> {
    return this.admit("RpcService.Call", caller, weight);
  }

  /** `weight` more requests on an admission (a batch admitted as one before its body was read): the request limit only. */
  admitMore(admission: Admission, caller: Caller, weight: number): MaybePromise<Admission> {
    const { limits, network } = this.deps;
    return andThen(limits.checkRequests(network, admission.access, caller.clientIp, weight), (d) => ({
      access: admission.access,
      headers: d ? rateLimitHeaders(d) : admission.headers,
    }));
  }

  /**
   * The refusal the caller's next request would get for its spent request window, counting nothing: asked
   * before a request's body is read (an over-limit caller's bodies are then neither read nor parsed).
   */
  refusedBeforeBody(caller: Caller, tryItOut = false): MaybePromise<GatewayError | undefined> {
    const { limits, network } = this.deps;
    if (caller.apiKey === undefined)
      return limits.spentRequests(network, PUBLIC, caller.clientIp) ?? (tryItOut ? limits.spentTryItOut(network, caller.clientIp) : undefined);
    return this.deps.authenticate(caller.apiKey).then(
      (access) => limits.spentRequests(network, access, caller.clientIp),
      // A key that does not authenticate is refused by the operation itself, as usual.
      () => undefined,
    );
  }

  /** Whether run() has work for this call (a quota to charge, an idempotency key to honour); else just call it. */
  hasRunWork(op: OperationName, caller: Caller): boolean {
    const rule = OPERATIONS[op];
    return rule.quota || (rule.idempotent && caller.idempotencyKey !== undefined && caller.idempotencyKey !== "");
  }

  /**
   * Runs an admitted operation: once per idempotency key when the operation is idempotent and the caller gave
   * one (a retry gets the first outcome, replayed), charging the daily quota once when the operation spends it.
   * `payload` is what the request asks for, without its idempotency key (a reused key with another payload is
   * refused).
   */
  async run<T>(
    op: OperationName,
    admission: Admission,
    caller: Caller,
    payload: () => string,
    codec: Codec<T>,
    fn: (hooks: Partial<ClaimHooks>) => MaybePromise<T>,
  ): Promise<{ value: T; replayed: boolean }> {
    const rule = OPERATIONS[op];
    const charged = async (hooks: Partial<ClaimHooks>): Promise<T> => {
      if ("faucet" in rule) await this.deps.limits.checkFaucet(admission.access);
      if (rule.quota) await this.deps.limits.checkTransaction(admission.access);
      return fn(hooks);
    };
    const key = caller.idempotencyKey;
    if (!rule.idempotent || key === undefined || key === "") return { value: await charged({}), replayed: false };
    if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
      throw new GatewayError("validation", `the idempotency key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
    const who = admission.access.kind === "key" ? `key:${admission.access.keyId}` : `ip:${caller.clientIp}`;
    let fresh: { value: T } | undefined;
    const kept = await this.deps.idempotency.once(`${this.deps.network}:${op}:${who}`, key, payload(), async (hooks) => {
      fresh = { value: await charged(hooks) };
      return codec.encode(fresh.value);
    });
    return !kept.replayed && fresh ? { value: fresh.value, replayed: false } : { value: codec.decode(kept.value), replayed: true };
  }

  private limit(op: OperationName, access: Access, ip: string, weight: number): MaybePromise<Admission> {
    const { limits, network } = this.deps;
    const decided = andThen(limits.checkRequests(network, access, ip, weight), (d) => ({ access, headers: d ? rateLimitHeaders(d) : NO_HEADERS }));
    if (OPERATIONS[op].limit !== "requests+tryItOut" || access.kind !== "public") return decided;
    return andThen(decided, async (a) => {
      await limits.checkTryItOut(network, ip);
      return a;
    });
  }
}
