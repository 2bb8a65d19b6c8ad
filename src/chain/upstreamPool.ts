// The upstream pool of one network: sends JSON-RPC to a healthy node, failing over on timeouts, connection
// errors and 5xx; a background probe keeps health (and readiness) current. Policy lives in front of it.
import { UpstreamHttp, UpstreamHttpError } from "./upstreamHttp.js";
import { GatewayError, fromUpstreamError, type JsonValue } from "../errors.js";
import type { Logger } from "../log/logger.js";

export interface RpcCall {
  method: string;
  params: JsonValue[];
}

/**
 * A call's outcome: a result, or a GatewayError to report for that call. `raw`, when present, is the result's
 * JSON text exactly as the node sent it: JSON-RPC replies splice it in unparsed, and `result` is then parsed
 * only if something reads it (the cache, Connect).
 */
export type RpcOutcome = { ok: true; result: JsonValue; raw?: string } | { ok: false; error: GatewayError };

/** An outcome that parses its raw JSON only when `result` is first read. */
export function rawOutcome(raw: string): RpcOutcome {
  let parsed: JsonValue | undefined;
  return {
    ok: true,
    raw,
    get result(): JsonValue {
      return (parsed ??= JSON.parse(raw) as JsonValue);
    },
  };
}

interface Upstream {
  url: string;
  /** The URL without path or credentials, for logs and metric labels (computed once). */
  label: string;
  /** Keep-alive connections to the node: no per-request connection or fetch overhead. */
  http: UpstreamHttp;
  healthy: boolean;
  /** Reports another chain (chain id or genesis): never sent anything until a probe finds it right again. */
  wrongChain: boolean;
  lastError: string | undefined;
}

export interface UpstreamObserver {
  latency(upstream: string, seconds: number): void;
  health(upstream: string, healthy: boolean): void;
}

export interface UpstreamPoolOptions {
  observer?: UpstreamObserver;
  urls: string[];
  chainId: number;
  timeoutMs: number;
  probeIntervalMs: number;
  log: Logger;
}

class TransientUpstreamError extends Error {}

export class UpstreamPool {
  private readonly upstreams: Upstream[];
  private probeTimer: NodeJS.Timeout | undefined;
  private nextId = 1;

  constructor(private readonly options: UpstreamPoolOptions) {
    if (options.urls.length === 0) throw new Error("an upstream pool needs at least one URL");
    this.upstreams = options.urls.map((url) => ({
      url,
      label: redactUrl(url),
      http: new UpstreamHttp(new URL(url), { connections: 128, timeoutMs: options.timeoutMs }),
      healthy: true,
      wrongChain: false,
      lastError: undefined,
    }));
  }

  /** The chain's identity (its genesis hash), learned at start: an upstream on another genesis is taken out. */
  private genesisHash: string | undefined;

  /** Sets the genesis hash every upstream must have from now on (checked by each probe). */
  expectGenesis(hash: string): void {
    this.genesisHash = hash;
  }

  /** Called with each probe's latest block number (0x hex), e.g. to track the head for caching. */
  onHead: ((blockNumber: string) => void) | undefined;

  /** Starts periodic health probes; the first runs at once. */
  start(): Promise<void> {
    const probe = (): Promise<void> => this.probeAll().catch(() => undefined);
    this.probeTimer = setInterval(probe, this.options.probeIntervalMs);
    this.probeTimer.unref();
    return probe();
  }

  stop(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    for (const u of this.upstreams) u.http.close();
  }

  /** True when at least one upstream answered its last probe or request. */
  get ready(): boolean {
    return this.upstreams.some((u) => u.healthy);
  }

  /** Every upstream is on another chain than the one the gateway journals for: nothing may be sent. */
  get onlyOtherChains(): boolean {
    return this.upstreams.every((u) => u.wrongChain);
  }

  health(): { url: string; healthy: boolean; lastError?: string }[] {
    return this.upstreams.map((u) => ({ url: u.label, healthy: u.healthy, ...(u.lastError ? { lastError: u.lastError } : {}) }));
  }

  /** One call; throws the upstream's JSON-RPC error as a GatewayError. */
  async call(method: string, params: JsonValue[]): Promise<JsonValue> {
    const [outcome] = await this.callMany([{ method, params }]);
    if (!outcome) throw new GatewayError("internal", "upstream returned no answer");
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  /** Several calls as one upstream batch (one round trip); outcomes in call order. */
  async callMany(calls: RpcCall[]): Promise<RpcOutcome[]> {
    if (calls.length === 0) return [];
    const firstId = this.nextId;
    this.nextId += calls.length;
    const body = JSON.stringify(
      calls.length === 1
        ? { jsonrpc: "2.0", id: firstId, method: calls[0]!.method, params: calls[0]!.params }
        : calls.map((c, i) => ({ jsonrpc: "2.0", id: firstId + i, method: c.method, params: c.params })),
    );
    // A single call's answer in the layout nodes use ({"jsonrpc":"2.0","id":N,"result":…}) is sliced, not
    // parsed: the JSON-RPC reply re-uses the node's bytes, so a large result is not parsed and re-serialised.
    const prefix = calls.length === 1 ? `{"jsonrpc":"2.0","id":${firstId},"result":` : undefined;
    const parsed = await this.send(body, (text) => (prefix !== undefined ? sliceResult(text, prefix) : undefined) ?? parseJson(text));
    if (parsed instanceof RawResult) return [rawOutcome(parsed.raw)];
    const replies = Array.isArray(parsed) ? parsed : [parsed];
    const byId = new Map<number, UpstreamReply>();
    for (const reply of replies) if (isReply(reply) && typeof reply.id === "number") byId.set(reply.id, reply);
    return calls.map((_, i) => {
      const reply = byId.get(firstId + i);
      if (!reply) return { ok: false, error: new GatewayError("internal", "upstream answer was missing a response") };
      if (reply.error) return { ok: false, error: fromUpstreamError(reply.error.code, reply.error.message, reply.error.data) };
      return { ok: true, result: reply.result ?? null };
    });
  }

  private order(): Upstream[] {
    const healthy = this.upstreams.filter((u) => u.healthy);
    // A node of another chain is never a last resort: its answers (and its acceptance of a write) are wrong.
    const unhealthy = this.upstreams.filter((u) => !u.healthy && !u.wrongChain);
    return [...healthy, ...unhealthy];
  }

  /** Posts to the first healthy upstream whose answer `decode` accepts, failing over on transient errors. */
  private async send<T>(body: string, decode: (text: string) => T): Promise<T> {
    let lastError: unknown;
    for (const upstream of this.order()) {
      try {
        const parsed = decode(await this.post(upstream, body));
        if (!upstream.healthy) {
          this.options.log.info("upstream recovered", { upstream: upstream.label });
          this.setHealth(upstream, true);
          upstream.lastError = undefined;
        }
        return parsed;
      } catch (err) {
        if (!(err instanceof TransientUpstreamError)) throw err;
        lastError = err;
        if (upstream.healthy) this.options.log.warn("upstream failed, failing over", { upstream: upstream.label, error: err.message });
        this.setHealth(upstream, false);
        upstream.lastError = err.message;
      }
    }
    throw new GatewayError("upstream_unavailable", "no healthy upstream node is reachable; try again shortly", { cause: lastError });
  }

  /** The body of a non-5xx answer; transient errors for timeouts, connection failures, 5xx and 429. */
  private async post(upstream: Upstream, body: string): Promise<string> {
    const started = performance.now();
    let answer: { status: number; text: string };
    try {
      answer = await upstream.http.post(body);
      this.options.observer?.latency(upstream.label, (performance.now() - started) / 1000);
    } catch (err) {
      throw new TransientUpstreamError(err instanceof UpstreamHttpError ? err.message : `connection failed: ${(err as Error).message}`);
    }
    if (answer.status >= 500 || answer.status === 429) throw new TransientUpstreamError(`HTTP ${answer.status}`);
    return answer.text;
  }

  private setHealth(u: Upstream, healthy: boolean): void {
    u.healthy = healthy;
    this.options.observer?.health(u.label, healthy);
  }

  private async probeAll(): Promise<void> {
    const expected = "0x" + this.options.chainId.toString(16);
    await Promise.all(
      this.upstreams.map(async (u) => {
        try {
          // One round trip: chain id, genesis (the chain's identity: a node restarted on a new chain keeps
          // its chain id) and head.
          let replies = parseJson(await this.post(u, PROBE_BATCH));
          // A node (or proxy) without batch support answers one object: ask one call at a time instead.
          if (!Array.isArray(replies)) replies = await Promise.all(PROBE_CALLS.map(async (c) => parseJson(await this.post(u, JSON.stringify(c)))));
          const byId = new Map<unknown, UpstreamReply>();
          for (const r of replies as unknown[]) if (isReply(r)) byId.set(r.id, r);
          const chainId = byId.get(0)?.result;
          const genesis = byId.get(1)?.result as { hash?: string } | null | undefined;
          const wrong =
            chainId !== expected
              ? `reports chain id ${JSON.stringify(chainId)}, expected ${expected}`
              : this.genesisHash !== undefined && genesis?.hash !== this.genesisHash
                ? `has genesis ${String(genesis?.hash)}, expected ${this.genesisHash}: another chain`
                : undefined;
          if (wrong) {
            if (!u.wrongChain) this.options.log.error("upstream is on another chain: taken out of service", { upstream: u.label, error: wrong });
            u.wrongChain = true;
            throw new TransientUpstreamError(wrong);
          }
          u.wrongChain = false;
          const head = byId.get(2)?.result;
          if (this.onHead && typeof head === "string") this.onHead(head);
          if (!u.healthy) this.options.log.info("upstream healthy", { upstream: u.label });
          this.setHealth(u, true);
          u.lastError = undefined;
        } catch (err) {
          if (u.healthy) this.options.log.warn("upstream unhealthy", { upstream: u.label, error: (err as Error).message });
          this.setHealth(u, false);
          u.lastError = (err as Error).message;
        }
      }),
    );
  }
}

const PROBE_CALLS = [
  { jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] },
  { jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x0", false] },
  { jsonrpc: "2.0", id: 2, method: "eth_blockNumber", params: [] },
];
const PROBE_BATCH = JSON.stringify(PROBE_CALLS);

class RawResult {
  constructor(readonly raw: string) {}
}

/** The result's JSON text when `text` is `prefix` + one JSON value + "}", else undefined (then parse). */
function sliceResult(text: string, prefix: string): RawResult | undefined {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  if (!text.startsWith(prefix) || text.charCodeAt(end - 1) !== 0x7d) return undefined;
  const raw = text.slice(prefix.length, end - 1);
  // A cheap shape check that the value is whole: it must open and close like one JSON value. Anything else
  // goes through JSON.parse, which rejects garbage (and a node answering garbage is failed over).
  const first = raw.charCodeAt(0);
  const last = raw.charCodeAt(raw.length - 1);
  const whole =
    (first === 0x22 && last === 0x22 && raw.length >= 2) || // "…"
    (first === 0x7b && last === 0x7d) || // {…}
    (first === 0x5b && last === 0x5d) || // […]
    raw === "null" ||
    raw === "true" ||
    raw === "false" ||
    /^-?\d+$/.test(raw);
  return whole ? new RawResult(raw) : undefined;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A node that answers garbage is as good as down.
    throw new TransientUpstreamError("the answer is not JSON");
  }
}

interface UpstreamReply {
  id?: unknown;
  result?: JsonValue;
  error?: { code: number; message: string; data?: JsonValue };
}

function isReply(v: unknown): v is UpstreamReply {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Upstream URLs may embed provider keys in the path or userinfo; keep only the origin for logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "[invalid url]";
  }
}
