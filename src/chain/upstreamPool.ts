// The upstream pool of one network: sends JSON-RPC to the best node, failing over on timeouts, connection
// errors and 5xx; a background probe keeps each node's health, chain and head current (upstreamProbe.ts).
// Which node is best is upstreamRouting.ts's (lag, score, circuit, hedge delay); this file acts on it: a
// read not answered by its node's recent p90 is also sent to the next node (hedged: first answer wins); writes
// go to every usable node at once; eth_blockNumber never goes backwards; a null receipt or transaction for a
// hash sent through this pool is asked of the other nodes too (read-your-writes); single point reads that
// arrive together ride as one batch (readBatcher.ts). Policy lives in front of it.
import { HeightWaits, REACH_MAX_GAP } from "./reachHeight.js";
import { MinedSeen } from "./minedSeen.js";
import { BATCHABLE, ReadBatcher } from "./readBatcher.js";
import { blockNeeded } from "./blockNeeded.js";
import { type UpstreamAnswer, UpstreamHttpError } from "./upstreamHttp.js";
import { inSpan, outgoingTraceparent, SpanKind, tracingOn } from "../trace/tracing.js";
import { PROBE_BATCH, PROBE_CALLS, readProbe } from "./upstreamProbe.js";
import { type IntegrityCheck, observeTagged, type PoolView, suspect } from "./answerIntegrity.js";
import {
  isReply,
  parseJson,
  RawResult,
  rawOutcome,
  type RpcCall,
  type RpcOutcome,
  sliceResult,
  TransientUpstreamError,
  type UpstreamReply,
} from "./upstreamReplies.js";
import {
  DEFAULT_ROUTING,
  hedgeDelay,
  newUpstream,
  recordFailure,
  recordProbeFailure,
  recordDroppedWrite,
  recordProbeSuccess,
  recordSuccess,
  routeOrder,
  redactUrl,
  type RoutingOptions,
  score,
  type Upstream,
} from "./upstreamRouting.js";
import { GatewayError, fromUpstreamError, type JsonValue, toGatewayError } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { keccak256 } from "ethers";
import { ttlCache } from "../ttlCache.js";
import { monotonicNow } from "../clock.js";
import { MethodTable } from "../methodTable.js";

const ALREADY_KNOWN = /already known|known transaction|already imported|AlreadyKnown|transaction already exists/i;
const WRITES = new Set(["eth_sendRawTransaction"]);
const BY_HASH = new Set(["eth_getTransactionReceipt", "eth_getTransactionByHash"]);
/** Hashes sent through this pool are remembered this long, at most this many (read-your-writes). */
const SENT_TTL_MS = 10 * 60_000;
const SENT_MAX = 50_000;
/** Most calls in one batch of gathered reads (readBatcher.ts): the gateway's own batch limit's default. */
const READ_BATCH_MAX = 40;
/** A call the node's answer left out (a batch answered with one error object): gathered reads go again alone. */
const MISSING_REPLY = "upstream answer was missing a response";

export interface UpstreamState {
  url: string;
  healthy: boolean;
  cordoned: boolean;
  wrongChain: boolean;
  syncing: boolean;
  head: number;
  lag: number;
  score: number;
  breakerOpen: boolean;
  failures: number;
  lastError: string;
  /** Sent no writes for now: it took writes that no node held afterwards (while another node takes them). */
  writesPaused: boolean;
  /** Routing weight (config networks.*.weights). */
  weight: number;
}

export interface UpstreamObserver {
  latency(upstream: string, seconds: number): void;
  health(upstream: string, healthy: boolean): void;
  /** After each probe: blocks behind the best, score (lower is better), circuit open. */
  routing?(upstream: string, figures: { lag: number; score: number; open: boolean; writesPaused: boolean }): void;
  /** A write the node took was held by no node afterwards; `paused`: that paused its writes. */
  droppedWrite?(upstream: string, paused: boolean): void;
  /** An answer failed an integrity check (answerIntegrity.ts); `corrected`: another node answered it right. */
  integrity?(check: IntegrityCheck, corrected: boolean): void;
  hedge?(won: boolean): void;
  /** A read waited for a node to reach the block it names (reachHeight.ts): whether one did in time. */
  heightWait?(reached: boolean): void;
}

/** How one method's upstream calls run (config methodPolicies); unset fields keep the pool's own. */
export interface MethodPolicy {
  timeoutMs?: number | undefined;
  /** Other nodes tried after a failure. */
  retries?: number | undefined;
  hedge?: boolean | undefined;
}

export interface UpstreamPoolOptions {
  /** Per-method policies by name or prefix (methodTable.ts). */
  methodPolicies?: Record<string, MethodPolicy>;
  observer?: UpstreamObserver;
  urls: string[];
  chainId: number;
  timeoutMs: number;
  /** A node's answer larger than this fails (see UpstreamHttpOptions.maxAnswerBytes). */
  maxAnswerBytes?: number;
  probeIntervalMs: number;
  /** A node that does not answer its probe within this is unresponsive: not ready, sent nothing until it answers. */
  probeTimeoutMs?: number;
  log: Logger;
  routing?: Partial<RoutingOptions>;
  /** Single point reads arriving in one event-loop turn go as one batch (readBatcher.ts); default true. */
  batchReads?: boolean;
}

export class UpstreamPool {
  private readonly upstreams: Upstream[];
  private probeTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  readonly routing: RoutingOptions;
  /** The highest block number any answer gave on this network: eth_blockNumber never answers less. */
  private highestBlock = -1;
  /** Reads waiting for a node to reach a height the gateway named (reachHeight.ts), and the last not reached. */
  private readonly heights = new HeightWaits(async (u) => {
    const [o] = await this.callOn([{ method: "eth_blockNumber", params: [] }], u);
    return o?.ok && typeof o.result === "string" ? Number.parseInt(o.result, 16) : undefined;
  });
  private unreached = -1;
  /** By-hash answers seen mined, with their block (minedSeen.ts). */
  private readonly minedSeen = new MinedSeen();
  /** The integrity checks' view (answerIntegrity.ts); its safe/finalized blocks persist between calls. */
  private readonly taggedView: PoolView = { best: -1, lowest: -1, tagged: new Map() };

  /** The newest block any node has reported (a probe, an eth_blockNumber), if one has. */
  get head(): number | undefined {
    let best = this.highestBlock;
    for (const u of this.upstreams) if (u.head > best) best = u.head;
    return best >= 0 ? best : undefined;
  }
  /** Transaction hashes sent through this pool, with the nodes that took them (read-your-writes, dropped sends). */
  private readonly sent = ttlCache<string, Upstream[]>(SENT_MAX, SENT_TTL_MS);
  private readonly batcher: ReadBatcher | undefined;
  /** Nodes whose last probe batch was answered with one object: reads are not gathered while any is in the pool. */
  private readonly refusesBatches = new Set<Upstream>();
  /** Nodes with a probe in flight. */
  private readonly probing = new Set<Upstream>();
  private readonly policies: MethodTable<MethodPolicy>;

  constructor(private readonly options: UpstreamPoolOptions) {
    if (options.urls.length === 0) throw new Error("an upstream pool needs at least one URL");
    this.routing = { ...DEFAULT_ROUTING, ...options.routing };
    this.policies = new MethodTable(options.methodPolicies);
    this.upstreams = options.urls.map((url) => newUpstream(url, this.routing, options.timeoutMs, options.maxAnswerBytes));
    if (options.batchReads !== false) this.batcher = new ReadBatcher((calls, caller) => this.sendGathered(calls, caller), READ_BATCH_MAX);
  }

  /** The chain's identity (its genesis hash), learned at start: an upstream on another genesis is taken out. */
  private genesisHash: string | undefined;

  /**
   * Takes a new list of nodes (a reloaded configuration): a new one is out of service until its first probe
   * says it is on this chain and answering; a removed one is cordoned at once (nothing new is sent to it) and
   * let go once requests sent to it before can have ended (`drainMs`). Returns the labels added and removed.
   */
  setUpstreams(urls: readonly string[], drainMs = 2 * this.options.timeoutMs): { added: string[]; removed: string[] } {
    if (urls.length === 0) throw new GatewayError("validation", "a network needs at least one upstream");
    const added = urls.filter((url) => !this.upstreams.some((u) => u.url === url));
    const removed = this.upstreams.filter((u) => !urls.includes(u.url));
    for (const url of added) {
      const u = newUpstream(url, this.routing, this.options.timeoutMs, this.options.maxAnswerBytes);
      u.healthy = false;
      this.upstreams.push(u);
    }
    for (const u of removed) {
      u.cordoned = true;
      setTimeout(() => {
        const at = this.upstreams.indexOf(u);
        if (at >= 0) this.upstreams.splice(at, 1);
        u.http.close();
      }, drainMs).unref();
    }
    if (added.length > 0 || removed.length > 0) {
      this.options.log.info("upstreams changed", { added: added.map(redactUrl), removed: removed.map((u) => u.label) });
      void this.probeAll().catch(() => undefined);
    }
    return { added: added.map(redactUrl), removed: removed.map((u) => u.label) };
  }

  /** Routing weights by URL (config networks.*.weights); a node not named weighs 1. */
  setWeights(weights: Readonly<Record<string, number>>): void {
    for (const u of this.upstreams) u.weight = weights[u.url] ?? 1;
  }

  /** New per-method policies (a reloaded configuration): the next calls run by them. */
  setMethodPolicies(table: Record<string, MethodPolicy>): void {
    this.policies.replace(table);
  }

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

  /** Each node as the router sees it (the admin API's ListUpstreams). */
  states(): UpstreamState[] {
    const best = Math.max(...this.upstreams.map((u) => u.head));
    const now = monotonicNow();
    return this.upstreams.map((u) => ({
      url: u.label,
      healthy: u.healthy,
      cordoned: u.cordoned,
      wrongChain: u.wrongChain,
      syncing: u.syncing,
      head: u.head,
      lag: u.head < 0 ? 0 : best - u.head,
      score: score(u),
      breakerOpen: u.openUntil > now,
      failures: u.failures,
      lastError: u.lastError ?? "",
      writesPaused: u.writesPausedUntil > now,
      weight: u.weight,
    }));
  }

  /**
   * Takes a node out of service (or puts it back): nothing is sent to it, probes go on. `url` as states() names
   * it. The last node in service is not cordoned: every request would fail.
   */
  cordon(url: string, cordoned: boolean): UpstreamState {
    const matching = this.upstreams.filter((u) => u.label === url || u.url === url);
    if (matching.length === 0) throw new GatewayError("not_found", `no upstream of this network is ${url}`);
    if (matching.length > 1) throw new GatewayError("validation", `${url} names ${matching.length} upstreams; give the full URL`);
    const u = matching[0]!;
    if (cordoned && !u.cordoned && this.upstreams.every((o) => o === u || o.cordoned || o.wrongChain))
      throw new GatewayError("conflict", `${u.label} is the last upstream in service: cordoning it would leave none`);
    if (u.cordoned !== cordoned) this.options.log.warn(cordoned ? "upstream cordoned: nothing is sent to it" : "upstream uncordoned", { upstream: u.label });
    u.cordoned = cordoned;
    return this.states()[this.upstreams.indexOf(u)]!;
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

  /**
   * A background read whose answer may be large and that no client waits on (a whole block of a busy chain,
   * read by the nonce spender): `timeoutMs` replaces the node's usual deadline, so a client-sized deadline
   * does not fail it; never gathered with other reads or hedged.
   */
  async callPatient(method: string, params: JsonValue[], timeoutMs: number): Promise<JsonValue> {
    const [outcome] = await this.callNow([{ method, params }], undefined, timeoutMs);
    if (!outcome) throw new GatewayError("internal", "upstream returned no answer");
    if (!outcome.ok) throw outcome.error;
    return outcome.result;
  }

  /**
   * Several calls as one upstream batch (one round trip); outcomes in call order. `caller` is aborted when the
   * caller gives up (its deadline, a disconnect): no failover or hedge starts after that. The request in flight
   * is left to finish, as a coalesced read may have other callers waiting on it. A single point read may ride
   * with others of its event-loop turn (readBatcher.ts); it then goes on for whoever still waits. The layers
   * down to the node hand its promise on as it is (no async wrapper, no extra turn).
   */
  callMany(calls: RpcCall[], caller?: AbortSignal): Promise<RpcOutcome[]> {
    // A read with a policy of its own goes alone: a gathered batch runs by the pool's.
    if (
      calls.length === 1 &&
      this.batcher &&
      this.refusesBatches.size === 0 &&
      BATCHABLE.has(calls[0]!.method) &&
      (this.policies.empty || !this.policies.of(calls[0]!.method))
    )
      return this.batcher.add(calls[0]!, caller);
    return this.callNow(calls, caller);
  }

  /** Gathered reads (readBatcher.ts): a call the node's batch answer left out goes again alone. */
  private sendGathered(calls: RpcCall[], caller: AbortSignal | undefined): Promise<RpcOutcome[]> {
    const sent = this.callNow(calls, caller);
    if (calls.length === 1) return sent;
    // A node that refuses batches, or one this size, answers one error for the whole: each call then goes alone.
    return sent.then((outcomes) =>
      Promise.all(
        outcomes.map((o, i) =>
          o.ok || o.error.message !== MISSING_REPLY
            ? o
            : this.callNow([calls[i]!]).then(
                ([alone]) => alone!,
                (err: unknown): RpcOutcome => ({ ok: false, error: toGatewayError(err) }),
              ),
        ),
      ),
    );
  }

  private callNow(calls: RpcCall[], caller?: AbortSignal, timeoutMs?: number): Promise<RpcOutcome[]> {
    if (calls.length === 0) return Promise.resolve([]);
    if (this.upstreams.length === 1) return this.callOn(calls, undefined, caller, timeoutMs);
    return this.callRouted(calls, caller, timeoutMs);
  }

  /** callNow with more than one node: writes to all, reads where their block is, each answer checked. */
  private async callRouted(calls: RpcCall[], caller?: AbortSignal, timeoutMs?: number): Promise<RpcOutcome[]> {
    if (calls.every((c) => WRITES.has(c.method))) return this.write(calls);
    // A read naming a block (latest: the gateway's head) goes to a node known to have it, waited for briefly
    // when none has it yet (reachHeight.ts).
    const route = this.holderOf(calls);
    const holder = typeof route === "number" ? await this.reach(route) : route;
    const outcomes = holder
      ? await this.callOn(calls, holder, caller, timeoutMs).catch(() => this.callOn(calls, undefined, caller, timeoutMs))
      : await this.callOn(calls, undefined, caller, timeoutMs);
    // eth_blockNumber never goes backwards for a client: a node behind the best answers the best seen.
    for (const [i, c] of calls.entries()) {
      const o = outcomes[i]!;
      if (c.method === "eth_blockNumber" && o.ok && typeof o.result === "string") {
        const n = Number.parseInt(o.result, 16);
        if (n > this.highestBlock) this.highestBlock = n;
        else if (n < this.highestBlock) outcomes[i] = { ok: true, result: `0x${this.highestBlock.toString(16)}` };
      }
    }
    // Integrity (answerIntegrity.ts): an answer that cannot be right is asked of a node that can answer it.
    const view = this.view();
    for (const [i, c] of calls.entries()) {
      const failed = suspect(c, outcomes[i]!, view);
      if (failed) outcomes[i] = await this.askElsewhere(c, outcomes[i]!, failed, view);
      observeTagged(c, outcomes[i]!, view);
    }
    // Read-your-writes: a hash this pool sent, not found on the node asked, is asked of the others; one
    // answered mined before is asked of a node that has its block (waited for, as above).
    for (const [i, c] of calls.entries()) {
      const o = outcomes[i]!;
      if (!BY_HASH.has(c.method) || !o.ok || typeof c.params[0] !== "string") continue;
      if (o.result !== null) {
        this.minedSeen.note(c.params[0], o.result);
        continue;
      }
      const minedIn = this.minedSeen.blockOf(c.params[0]);
      if (minedIn !== undefined) {
        // Every node at that height in turn: the first may be the one that just answered null.
        const level = this.usable().filter((u) => u.head >= minedIn);
        const there = level.length > 0 ? level : [await this.reach(minedIn)];
        for (const u of there) {
          const [again] = u ? await this.callOn([c], u).catch(() => [undefined]) : [undefined];
          if (again?.ok && again.result !== null) {
            outcomes[i] = again;
            break;
          }
        }
        continue;
      }
      if (!this.sent.has(c.params[0].toLowerCase())) continue;
      for (const u of this.usable()) {
        const [again] = await this.callOn([c], u).catch(() => [undefined]);
        if (again?.ok && again.result !== null) {
          outcomes[i] = again;
          break;
        }
      }
    }
    return outcomes;
  }

  /**
   * For reads that need a block some node in service lacks: the best-placed node whose head is at least that
   * block; a number: the height none has yet, a few blocks past the best (waited for: reach); else the one
   * furthest ahead. undefined: every node has it (or none is known), usual routing.
   */
  private holderOf(calls: RpcCall[]): Upstream | number | undefined {
    const head = this.head ?? -1;
    let need = -1;
    for (const c of calls) {
      const n = blockNeeded(c, head);
      if (n !== undefined && n > need) need = n;
    }
    if (need < 0) return undefined;
    const usable = this.usable();
    if (usable.every((u) => u.head >= need)) return undefined;
    const having = usable.find((u) => u.head >= need);
    if (having) return having;
    let ahead: Upstream | undefined;
    for (const u of usable) if (!ahead || u.head > ahead.head) ahead = u;
    if (ahead && need - ahead.head <= REACH_MAX_GAP && need > this.unreached) return need;
    return ahead && usable.some((u) => u.head < ahead!.head) ? ahead : undefined;
  }

  /**
   * A node that reached `height`, waited for; undefined (usual routing) when none did in time. A height not
   * reached is not waited for again until a node reaches it: the next reads are not held for nothing.
   */
  private async reach(height: number): Promise<Upstream | undefined> {
    const there = await this.heights.reach(height, () => this.usable());
    this.options.observer?.heightWait?.(there !== undefined);
    if (!there) this.unreached = Math.max(this.unreached, height);
    return there;
  }

  /** What the integrity checks compare an answer with: the nodes' heads and the tagged blocks served. */
  private view(): PoolView {
    let best = this.highestBlock;
    let lowest = Number.MAX_SAFE_INTEGER;
    for (const u of this.upstreams) {
      if (u.head < 0 || u.wrongChain || u.cordoned || !u.healthy) continue;
      best = Math.max(best, u.head);
      lowest = Math.min(lowest, u.head);
    }
    this.taggedView.best = best;
    this.taggedView.lowest = Math.min(lowest, best);
    return this.taggedView;
  }

  /**
   * A suspect answer asked again of the nodes, furthest ahead first; the first answer that passes wins. None: the answer stands, except logs outside the range asked, which never reach a caller.
   */
  private async askElsewhere(call: RpcCall, first: RpcOutcome, check: IntegrityCheck, view: PoolView): Promise<RpcOutcome> {
    // Those furthest ahead first (probe heads lag a little, so none is left out for it).
    for (const u of this.usable().sort((a, b) => b.head - a.head)) {
      const [again] = await this.callOn([call], u).catch(() => [undefined]);
      if (again?.ok && !suspect(call, again, view)) {
        this.options.observer?.integrity?.(check, true);
        return again;
      }
    }
    this.options.observer?.integrity?.(check, false);
    if (check !== "logs_outside_range") return first;
    return {
      ok: false,
      error: new GatewayError(
        "upstream_unavailable",
        "a node answered eth_getLogs with logs outside the range asked, and no other node answered it correctly; try again shortly",
      ),
    };
  }

  /**
   * Writes go to every usable node at once (but one pausing its writes, while another takes them): the first
   * acceptance answers; "already known" is an acceptance. Each hash is remembered with the nodes that took it.
   */
  private async write(calls: RpcCall[]): Promise<RpcOutcome[]> {
    const targets = this.writeTargets();
    if (targets.length === 0) return this.callOn(calls, undefined);
    const answers = targets.map((u) =>
      this.callOn(calls, u).then(
        (r) => ({ u, r }),
        (err: unknown) => ({ u, r: err as Error }),
      ),
    );
    const settled: { u: Upstream; r: RpcOutcome[] | Error }[] = [];
    // Resolved as soon as every call has an acceptance, or every node has answered.
    const accepted = (o: RpcOutcome | undefined): boolean => o !== undefined && (o.ok || ALREADY_KNOWN.test(o.error.message));
    await new Promise<void>((resolve) => {
      let left = answers.length;
      for (const a of answers)
        void a.then((s) => {
          settled.push(s);
          left--;
          const all = calls.every((_, i) => settled.some(({ r }) => !(r instanceof Error) && accepted(r[i])));
          if (all || left === 0) resolve();
        });
    });
    // No node answered at all: the failover order past the usable ones, as a read would go.
    if (settled.every(({ r }) => r instanceof Error)) return this.callOn(calls, undefined);
    const results = calls.map((c, i): RpcOutcome => {
      const oks = settled.flatMap(({ r }) => (r instanceof Error ? [] : [r[i]!]));
      const ok = oks.find((o) => o.ok);
      if (ok) return ok;
      const known = oks.find((o) => accepted(o));
      if (known && typeof c.params[0] === "string") return { ok: true, result: transactionHash(c.params[0]) };
      if (oks[0]) return oks[0];
      const err = settled.find(({ r }) => r instanceof Error)?.r as Error | undefined;
      return {
        ok: false,
        error: err instanceof GatewayError ? err : new GatewayError("upstream_unavailable", "no healthy upstream node is reachable; try again shortly"),
      };
    });
    for (const [i, c] of calls.entries()) {
      const takers = settled.flatMap(({ u, r }) => (!(r instanceof Error) && accepted(r[i]) ? [u] : []));
      const r = results[i]!;
      if (r.ok && typeof r.result === "string") this.remember(r.result, takers);
      else if (typeof c.params[0] === "string") this.remember(transactionHash(c.params[0]), takers);
    }
    return results;
  }

  private remember(hash: string, takers: Upstream[]): void {
    this.sent.set(hash.toLowerCase(), takers);
  }

  /**
   * Nodes a write goes to: the usable ones, but a node pausing its writes (it dropped some) while another
   * usable node takes them.
   */
  private writeTargets(): Upstream[] {
    const usable = this.usable();
    const now = monotonicNow();
    const trusted = usable.filter((u) => u.writesPausedUntil <= now);
    return trusted.length > 0 ? trusted : usable;
  }

  /**
   * Writes sent through this pool that no node holds well after they were taken (not pending, not mined): each
   * node that took one dropped it. A node that drops writes again and again is sent none for a while
   * (recordDroppedWrite), while another node takes them.
   */
  droppedWrites(hashes: string[]): void {
    for (const hash of hashes) {
      for (const u of this.sent.get(hash.toLowerCase()) ?? []) {
        const paused = recordDroppedWrite(u);
        this.options.observer?.droppedWrite?.(u.label, paused);
        if (paused) this.options.log.warn("a node takes writes and drops them: none sent to it for a while", { upstream: u.label, pausedMs: u.writePause.ms });
      }
    }
  }

  /** Nodes to send to, best first: on this chain, circuit not open, not lagging (unless all are). */
  private usable(): Upstream[] {
    return this.order().filter((u) => u.healthy);
  }

  /** `calls` as one request to `only`, or to the best node with failover (and hedging) when undefined. */
  private async callOn(calls: RpcCall[], only: Upstream | undefined, caller?: AbortSignal, timeoutMs?: number): Promise<RpcOutcome[]> {
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
    const decode = (text: string) => (prefix !== undefined ? sliceResult(text, prefix) : undefined) ?? parseJson(text);
    // The first call's method policy (a batch's calls are mostly of one method); a patient read's own deadline wins.
    const policy = this.policies.empty ? undefined : this.policies.of(calls[0]!.method);
    const deadline = timeoutMs ?? policy?.timeoutMs;
    const hedge = timeoutMs === undefined && !WRITES.has(calls[0]!.method) && (policy?.hedge ?? this.routing.hedge);
    const parsed = only
      ? await this.decoded(only, this.post(only, body, undefined, deadline), decode)
      : await this.send(body, decode, hedge, caller, deadline, policy?.retries);
    if (parsed instanceof RawResult) return [rawOutcome(parsed.raw)];
    const replies = Array.isArray(parsed) ? parsed : [parsed];
    const byId = new Map<number, UpstreamReply>();
    for (const reply of replies) if (isReply(reply) && typeof reply.id === "number") byId.set(reply.id, reply);
    return calls.map((_, i) => {
      const reply = byId.get(firstId + i);
      if (!reply) return { ok: false, error: unreadRequest(calls.length, replies) ?? new GatewayError("internal", MISSING_REPLY) };
      if (reply.error) return { ok: false, error: fromUpstreamError(reply.error.code, reply.error.message, reply.error.data) };
      return { ok: true, result: reply.result ?? null };
    });
  }

  private order(): Upstream[] {
    return routeOrder(this.upstreams, this.routing);
  }

  /**
   * Posts to the best node whose answer `decode` accepts, failing over on transient errors (to `retries`
   * other nodes; default all); with `hedge`, a read not answered within the node's hedge delay is also sent to
   * the next node, and the first good answer wins (the other request is cancelled: the node stops working on
   * it, and it counts as no failure). `timeoutMs`: a patient read's or a method policy's own deadline.
   */
  private async send<T>(body: string, decode: (text: string) => T, hedge: boolean, caller?: AbortSignal, timeoutMs?: number, retries?: number): Promise<T> {
    const all = this.order();
    const order = retries === undefined ? all : all.slice(0, retries + 1);
    let lastError: unknown;
    let next = 0;
    const callerGone = (): boolean => caller?.aborted === true;
    const attempt = (u: Upstream, signal?: AbortSignal): Promise<T> => this.decoded(u, this.post(u, body, signal, timeoutMs), decode);
    while (next < order.length) {
      // Failing over for a caller that gave up is work nobody waits for.
      if (next > 0 && callerGone()) break;
      const first = order[next++]!;
      const hedgeTo = hedge && next < order.length && order[next]!.healthy ? order[next] : undefined;
      try {
        if (!hedgeTo) return await attempt(first);
        return await this.hedged(attempt, first, hedgeTo, () => next++, callerGone);
      } catch (err) {
        if (!(err instanceof TransientUpstreamError)) throw err;
        lastError = err;
      }
    }
    if (callerGone()) throw new GatewayError("upstream_unavailable", "the caller gave up before a node answered", { cause: lastError });
    // The last node's own failure is named: "too large" or "timed out" tells an operator more than "unreachable".
    const why = lastError instanceof Error ? ` (the last one tried: ${lastError.message})` : "";
    throw new GatewayError("upstream_unavailable", `no healthy upstream node is reachable${why}; try again shortly`, { cause: lastError });
  }

  /** `first`, and after its hedge delay `second` too: the first good answer; both failing throws the last error. */
  private hedged<T>(
    attempt: (u: Upstream, signal?: AbortSignal) => Promise<T>,
    first: Upstream,
    second: Upstream,
    usedSecond: () => void,
    callerGone: () => boolean,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let pending = 1;
      let lastErr: unknown;
      let hedgeSent = false;
      const cancel = [new AbortController(), new AbortController()] as const;
      const settle = (fromHedge: boolean) => (v: T) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (hedgeSent) {
          this.options.observer?.hedge?.(fromHedge);
          // The loser is cancelled: its node stops working on an answer nobody will read.
          cancel[fromHedge ? 0 : 1].abort();
        }
        resolve(v);
      };
      const fail = (err: unknown) => {
        lastErr = err;
        if (--pending > 0 || done) return;
        // The first failed before the hedge went: the caller moves on to the next node itself.
        clearTimeout(timer);
        done = true;
        reject(lastErr);
      };
      const timer = setTimeout(
        () => {
          if (done || callerGone()) return;
          hedgeSent = true;
          pending++;
          usedSecond();
          attempt(second, cancel[1].signal).then(settle(true), fail);
        },
        hedgeDelay(first, this.routing),
      );
      timer.unref?.();
      attempt(first, cancel[0].signal).then(settle(false), fail);
    });
  }

  /** `decode` of a node's answer; a failure to answer or to decode is the node's (failed): one reaction, not two. */
  private decoded<T>(u: Upstream, answer: Promise<string>, decode: (text: string) => T): Promise<T> {
    return answer.then(
      (text) => {
        try {
          return decode(text);
        } catch (err) {
          return this.failed(u, err);
        }
      },
      (err: unknown) => this.failed(u, err),
    );
  }

  /** Counts a node's failure (its circuit opens after breakerFailures in a row) and rethrows. */
  private failed(upstream: Upstream, err: unknown): never {
    if (err instanceof TransientUpstreamError) {
      if (recordFailure(upstream, this.routing)) {
        this.options.log.warn("upstream circuit opened", { upstream: upstream.label, failures: upstream.failures, cooldownMs: this.routing.breakerCooldownMs });
      }
      if (upstream.healthy) this.options.log.warn("upstream failed, failing over", { upstream: upstream.label, error: err.message });
      this.setHealth(upstream, false);
      upstream.lastError = err.message;
    }
    throw err;
  }

  private succeeded(upstream: Upstream, ms: number): void {
    // Only a pool with somewhere to hedge to needs the answer-time distribution.
    recordSuccess(upstream, ms, this.upstreams.length > 1);
    if (!upstream.healthy) {
      this.options.log.info("upstream recovered", { upstream: upstream.label });
      this.setHealth(upstream, true);
      upstream.lastError = undefined;
    }
  }

  /** The body of a non-5xx answer; transient errors for timeouts, connection failures, 5xx and 429. */
  private post(upstream: Upstream, body: string, signal?: AbortSignal, timeoutMs?: number): Promise<string> {
    if (!tracingOn) return this.postTo(upstream, body, signal, undefined, timeoutMs);
    return inSpan(`upstream ${upstream.label}`, SpanKind.CLIENT, (span) => {
      span.setAttribute("rpc.system", "jsonrpc");
      span.setAttribute("rpc.method", rpcMethodsOf(body));
      return this.postTo(upstream, body, signal, outgoingTraceparent(), timeoutMs);
    });
  }

  private async postTo(upstream: Upstream, body: string, signal?: AbortSignal, traceparent?: string, timeoutMs?: number): Promise<string> {
    let answer: UpstreamAnswer;
    try {
      answer = await upstream.http.post(body, signal, traceparent, timeoutMs);
      const answeredAt = performance.now();
      this.options.observer?.latency(upstream.label, (answeredAt - answer.sentAt) / 1000);
      upstream.answeredAt = answeredAt;
      if (answer.status < 500 && answer.status !== 429) this.succeeded(upstream, answeredAt - answer.sentAt);
    } catch (err) {
      // A cancelled hedge is no failure of its node.
      if (err instanceof UpstreamHttpError && err.kind === "cancelled") throw err;
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
        // A node still holding its last probe gets no second one: that probe's deadline decides.
        if (this.probing.has(u)) return;
        this.probing.add(u);
        // Past its deadline with nothing answered since it went, the node is frozen (not merely busy): stalled,
        // so callers get an error at once instead of a 10 s wait each. The probe itself goes on: a slow node
        // that answers it is back in service at once.
        const sentAt = performance.now();
        const deadlineMs = this.options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
        let probeDone = false;
        // Judged after this turn's I/O (setImmediate): timers run before the poll phase, so an answer already
        // waiting on the socket after a busy turn of this process must not read as a silent node.
        const deadline = setTimeout(
          () =>
            setImmediate(() => {
              if (probeDone || u.answeredAt > sentAt || u.stalled) return;
              u.stalled = true;
              const message = `did not answer its health probe within ${deadlineMs} ms`;
              if (u.healthy) this.options.log.warn("upstream unhealthy", { upstream: u.label, error: message });
              recordProbeFailure(u, this.routing);
              this.setHealth(u, false);
              u.lastError = message;
            }).unref(),
          deadlineMs,
        );
        deadline.unref();
        try {
          // One round trip (upstreamProbe.ts); a node (or proxy) without batch support answers one object:
          // ask one call at a time instead.
          let replies = parseJson(await this.post(u, PROBE_BATCH));
          if (Array.isArray(replies)) this.refusesBatches.delete(u);
          else {
            this.refusesBatches.add(u);
            replies = await Promise.all(PROBE_CALLS.map(async (c) => parseJson(await this.post(u, JSON.stringify(c)))));
          }
          const reading = readProbe(replies as unknown[], expected, this.genesisHash);
          if (reading.wrongChain) {
            if (!u.wrongChain) this.options.log.error("upstream is on another chain: taken out of service", { upstream: u.label, error: reading.wrongChain });
            u.wrongChain = true;
            throw new TransientUpstreamError(reading.wrongChain);
          }
          u.wrongChain = false;
          if (u.stalled) this.options.log.info("upstream answers its probe again", { upstream: u.label });
          u.stalled = false;
          const head = reading.head;
          if (head !== undefined) u.head = Number.parseInt(head, 16);
          if (reading.syncing !== u.syncing)
            this.options.log.info(reading.syncing ? "upstream is syncing: reads go elsewhere" : "upstream finished syncing", { upstream: u.label });
          u.syncing = reading.syncing;
          if (this.onHead && head !== undefined) this.onHead(head);
          recordProbeSuccess(u);
          if (!u.healthy) this.options.log.info("upstream healthy", { upstream: u.label });
          this.setHealth(u, true);
          u.lastError = undefined;
        } catch (err) {
          recordProbeFailure(u, this.routing);
          if (u.healthy) this.options.log.warn("upstream unhealthy", { upstream: u.label, error: (err as Error).message });
          this.setHealth(u, false);
          if (!u.stalled) u.lastError = (err as Error).message;
        } finally {
          probeDone = true;
          clearTimeout(deadline);
          this.probing.delete(u);
        }
      }),
    );
    const best = Math.max(...this.upstreams.map((u) => u.head));
    for (const u of this.upstreams)
      this.options.observer?.routing?.(u.label, {
        lag: u.head < 0 ? 0 : best - u.head,
        score: score(u),
        open: u.openUntil > monotonicNow(),
        writesPaused: u.writesPausedUntil > monotonicNow(),
      });
  }
}

const DEFAULT_PROBE_TIMEOUT_MS = 1_500;

/**
 * A single call answered with one error of id null: the node could not read the request. Its envelope is
 * ours, so a parse error or invalid request is about the caller's params (a lone surrogate, nesting past the
 * node's parser): the caller's -32602, not a missing answer. Another code is the node's own error.
 */
function unreadRequest(calls: number, replies: unknown[]): GatewayError | undefined {
  const only = replies.length === 1 ? replies[0] : undefined;
  if (calls !== 1 || !isReply(only) || only.id !== null || !only.error) return undefined;
  const { code, message } = only.error;
  if (code === -32700 || code === -32600) return new GatewayError("invalid_params", `Invalid params: the node could not read them (${message})`);
  return fromUpstreamError(code, message, only.error.data);
}

/** A signed transaction's hash (what a node answers eth_sendRawTransaction with). */
function transactionHash(raw: string): string {
  return keccak256(raw);
}

/** The methods a request body calls, for a span's name ("eth_call", or "eth_call,eth_getBalance (batch of 2)"). */
function rpcMethodsOf(body: string): string {
  const methods = [...body.matchAll(/"method"\s*:\s*"([^"]{1,64})"/g)].map((m) => m[1]!);
  const distinct = [...new Set(methods)].slice(0, 8).join(",");
  return methods.length > 1 ? `${distinct} (batch of ${methods.length})` : distinct;
}
