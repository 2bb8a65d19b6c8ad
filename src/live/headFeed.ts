// One follower of a network's chain for every live subscriber (WebSocket eth_subscribe, Connect streams):
// it polls the head by number while anyone listens (an idle gateway polls nothing) — at once when the node's
// own new-heads WebSocket says a block came (upstreamHeads.ts), which then only wakes it — fetches each new block
// once, and hands blocks to its listeners in order, each exactly once. Gaps (a slow poll, a failover to
// another node) are filled by number; a node that is behind is waited for, never followed backwards; a
// block whose parent is not the block delivered before it is a reorg: the dropped blocks are told first
// (their logs then go out with removed: true, as geth does), then the new branch in order.
import type { JsonValue } from "../errors.js";
import type { HeadWakeups } from "./upstreamHeads.js";

/** What the feed needs from the upstream pool (failover is the pool's). */
export interface ChainReader {
  call(method: string, params: JsonValue[]): Promise<JsonValue>;
}

export interface FeedLog {
  address: string;
  topics: string[];
  /** The log as the node sent it, for notifications. */
  json: Record<string, JsonValue>;
}

export interface FeedBlock {
  number: number;
  hash: string;
  parentHash: string;
  /** The block's header as geth's newHeads sends it, serialised once for every subscriber. */
  headerJson: string;
  /** This block's logs, when a listener wanted logs while it was fetched. */
  logs?: FeedLog[];
}

export interface FeedListener {
  /** Fetch each block's logs while this listener is there. */
  readonly wantsLogs?: boolean;
  /** Follow the node's pending transactions while this listener is there. */
  readonly wantsPending?: boolean;
  /**
   * Hands blocks on to another process (a fan-out shard): told before the listeners that write here, so the
   * other process writes its sockets while this one writes its own.
   */
  readonly relay?: boolean;
  block?(block: FeedBlock): void;
  /** A block a reorg dropped, newest first, before the new branch's blocks. */
  removed?(block: FeedBlock): void;
  pending?(hashes: string[]): void;
}

export interface HeadFeedOptions {
  pollMs: number;
  /** Blocks kept to recognise a reorg and tell what it dropped. */
  windowBlocks?: number;
  /** Most blocks fetched in one poll (a long outage is caught up over several). */
  maxCatchUp?: number;
  onError?: (err: Error) => void;
  /** Rewrites a header before it is serialised (zero-fee networks: baseFeePerGas). */
  header?: (header: Record<string, JsonValue>) => Record<string, JsonValue>;
  /** The node's new-heads push, to read at once on each head; polling goes on, slower, while it is up. */
  wakeups?: HeadWakeups;
  /** The poll period while the push is up (a safety net for a missed notification); default 4 × pollMs. */
  pushedPollMs?: number;
}

/** Block fields geth's newHeads leaves out: a header is not a block. */
const NOT_HEADER = new Set(["transactions", "uncles", "size", "totalDifficulty", "withdrawals"]);

const hexNumber = (v: JsonValue): number => {
  if (typeof v !== "string" || !/^0x[0-9a-fA-F]+$/.test(v)) throw new Error(`not a hex quantity: ${JSON.stringify(v)}`);
  return Number.parseInt(v, 16);
};

export class HeadFeed {
  private listeners = new Set<FeedListener>();
  /** Delivered blocks, oldest first, contiguous by number. */
  private window: FeedBlock[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** A wake-up came while a poll ran: poll again right after it. */
  private again = false;
  private pushed = false;
  private pendingFilter: string | undefined;
  private readonly windowBlocks: number;
  private readonly maxCatchUp: number;

  constructor(
    private readonly chain: ChainReader,
    private readonly options: HeadFeedOptions,
  ) {
    this.windowBlocks = options.windowBlocks ?? 64;
    this.maxCatchUp = options.maxCatchUp ?? 128;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** The newest delivered block's number, once the feed has followed one. */
  get head(): number | undefined {
    return this.window.at(-1)?.number;
  }

  add(listener: FeedListener): void {
    // Relays first (the set keeps insertion order); a relay is added when a shard starts to want blocks.
    this.listeners = listener.relay ? new Set([listener, ...this.listeners]) : this.listeners.add(listener);
    if (this.listeners.size !== 1) return;
    this.schedule(0);
    this.options.wakeups?.start(
      () => this.wake(),
      (up) => (this.pushed = up),
    );
  }

  /** A new head was announced: read now (or right after the poll that is running). */
  private wake(): void {
    if (this.listeners.size === 0) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  remove(listener: FeedListener): void {
    this.listeners.delete(listener);
    if (this.listeners.size > 0) return;
    // Nobody listens: stop polling. The window is dropped too, so a later listener starts at the then head
    // rather than being sent the blocks mined meanwhile.
    clearTimeout(this.timer);
    this.timer = undefined;
    this.window = [];
    this.pendingFilter = undefined;
    this.options.wakeups?.stop();
    this.pushed = false;
  }

  stop(): void {
    for (const l of [...this.listeners]) this.remove(l);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), ms);
    this.timer.unref?.();
  }

  private async poll(): Promise<void> {
    if (this.running || this.listeners.size === 0) return;
    this.running = true;
    try {
      await this.follow();
      if (this.wants("wantsPending")) await this.followPending();
    } catch (err) {
      this.options.onError?.(err as Error);
    } finally {
      this.running = false;
      const again = this.again;
      this.again = false;
      if (this.listeners.size > 0) this.schedule(again ? 0 : this.pushed ? (this.options.pushedPollMs ?? 4 * this.options.pollMs) : this.options.pollMs);
    }
  }

  private wants(what: "wantsLogs" | "wantsPending"): boolean {
    for (const l of this.listeners) if (l[what]) return true;
    return false;
  }

  private async follow(): Promise<void> {
    const head = hexNumber(await this.chain.call("eth_blockNumber", []));
    const tip = this.window.at(-1);
    if (!tip) {
      // First poll: start at the head, delivering nothing older (geth's newHeads starts with the next block).
      const block = await this.fetch(head);
      if (block && this.listeners.size > 0 && this.window.length === 0) this.window.push(block);
      return;
    }
    // A node behind the delivered tip (after a failover, say) is waited for, never followed backwards.
    for (let n = tip.number + 1; n <= Math.min(head, tip.number + this.maxCatchUp); n++) {
      const block = await this.fetch(n);
      if (!block) return; // not there yet on the node that answered: the next poll retries
      if (this.listeners.size === 0) return;
      const last = this.window.at(-1)!;
      if (block.parentHash !== last.hash) await this.reorg(block);
      else this.deliver(block);
    }
  }

  /** `block` does not extend the delivered tip: walk its branch back to a delivered block, then switch. */
  private async reorg(block: FeedBlock): Promise<void> {
    const branch = [block];
    for (;;) {
      const first = branch[0]!;
      const below = this.window.find((b) => b.number === first.number - 1);
      if (!below || below.hash === first.parentHash) break;
      const parent = await this.fetchByHash(first.parentHash);
      if (!parent) break;
      branch.unshift(parent);
    }
    const from = branch[0]!.number;
    const dropped = this.window.filter((b) => b.number >= from).reverse();
    this.window = this.window.filter((b) => b.number < from);
    for (const b of dropped) for (const l of this.listeners) l.removed?.(b);
    for (const b of branch) this.deliver(b);
  }

  private deliver(block: FeedBlock): void {
    this.window.push(block);
    if (this.window.length > this.windowBlocks) this.window.shift();
    for (const l of this.listeners) l.block?.(block);
  }

  private async fetch(n: number): Promise<FeedBlock | undefined> {
    return this.toFeedBlock(await this.chain.call("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]));
  }

  private async fetchByHash(hash: string): Promise<FeedBlock | undefined> {
    return this.toFeedBlock(await this.chain.call("eth_getBlockByHash", [hash, false]));
  }

  private async toFeedBlock(raw: JsonValue): Promise<FeedBlock | undefined> {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
    let header: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(raw)) if (!NOT_HEADER.has(k)) header[k] = v;
    if (this.options.header) header = this.options.header(header);
    const block: FeedBlock = {
      number: hexNumber(raw.number ?? null),
      hash: String(raw.hash),
      parentHash: String(raw.parentHash),
      headerJson: JSON.stringify(header),
    };
    if (this.wants("wantsLogs")) {
      const logs = await this.chain.call("eth_getLogs", [{ blockHash: block.hash }]);
      block.logs = (Array.isArray(logs) ? logs : []).map((log) => {
        const json = log as Record<string, JsonValue>;
        return { address: String(json.address).toLowerCase(), topics: (json.topics as string[] | undefined) ?? [], json };
      });
    }
    return block;
  }

  private async followPending(): Promise<void> {
    try {
      this.pendingFilter ??= String(await this.chain.call("eth_newPendingTransactionFilter", []));
      const hashes = await this.chain.call("eth_getFilterChanges", [this.pendingFilter]);
      if (Array.isArray(hashes) && hashes.length > 0) for (const l of this.listeners) l.pending?.(hashes as string[]);
    } catch (err) {
      // A node that lost the filter (restarted, or another node after a failover): a new one next poll.
      this.pendingFilter = undefined;
      throw err;
    }
  }
}
