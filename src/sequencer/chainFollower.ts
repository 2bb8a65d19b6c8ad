// Follows the chain for the sequencer's broadcast writes, block by block: one eth_getBlockByNumber(n, false)
// per new block, its transaction hashes matched against the writes still waiting; receipts only for writes
// that run code (they can revert) or that a caller waits on. A write is `completed` once it is `confirmations`
// deep. Every block's parentHash is checked against the block before it, and the head is watched even while
// idle (observeHead): a node that goes back (a rewind, a restart on older state, a reorg) sends its writes
// back to "pending" and the sequencer re-sends them from the journal. Nothing here is per signer: with
// nothing unfinished, and its last confirmations CONFIRMED_WINDOW deep, it makes no upstream call at all.
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { SubmissionStore } from "../store/submissionStore.js";
import type { JsonValue } from "../errors.js";
import type { Logger } from "../log/logger.js";
import type { HeadWakeups } from "../live/upstreamHeads.js";

/** Refused hashes remembered for late waiters. */
const FAILED_KEPT = 1_000;

export interface RpcReceipt {
  status: string;
  blockNumber: string;
  blockHash: string;
  gasUsed: string;
  contractAddress: string | null;
  transactionHash: string;
  logs: { address: string; topics: string[]; data: string; logIndex: string }[];
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: string[];
}

/** A block a write was seen in, read whole by number (nonceSpender.ts). */
export interface MinedIn {
  block: number;
  blockHash: string;
}

export interface TrackOptions {
  /** Runs code, so it can revert: its receipt decides completed or error. */
  runsCode?: boolean;
  /**
   * Already seen mined there, by a read that did not go by hash: a node that answers null by hash (an index
   * being rebuilt) would otherwise never show it. Its outcome, if it runs code, comes from the block's receipts.
   */
  minedIn?: MinedIn;
  /** For the lag figures (per-signer counts stay in memory, never in metric labels). */
  signer?: string;
}

interface Watched {
  hash: string;
  queueId: string | undefined;
  signer: string | undefined;
  runsCode: boolean;
  /** A later hash was tracked for the same queueId (a fee bump): the journal holds another one. */
  superseded: boolean;
  waiters: ((r: RpcReceipt) => void)[];
  /** Told when the write ends without a receipt (the node refused it for good). */
  failers?: ((err: Error) => void)[];
  askedAt: number;
  /** Set once seen in a block. */
  block?: number;
  blockHash?: string;
  /** Once the outcome is known: true mined and succeeded, false reverted. */
  ok?: boolean;
}

export interface FollowerStats {
  /** Writes broadcast and not yet confirmed. */
  unconfirmed: number;
  /** Signers with at least one unconfirmed write. */
  lanesLagging: number;
  /** The most unconfirmed writes of one signer. */
  maxLag: number;
  rewinds: number;
}

export interface ChainFollowerOptions {
  pool: Pick<UpstreamPool, "call" | "callMany">;
  store: Pick<SubmissionStore, "update">;
  pollMs: number;
  /** A write is completed once this many blocks hold it (its own included). */
  confirmations: number;
  log: Logger;
  /** The chain's genesis hash: a node answering with another one is another chain, not a rewind (the pool takes it out). */
  genesisHash?: string;
  /**
   * The node went back to `fork` (walked at `forkWalkedAt`, when known): writes it no longer has are pending
   * again; re-send the journal.
   */
  onRewind?: (fork: number, forkWalkedAt: Date | undefined) => Promise<void> | void;
  /**
   * The node's new-heads push, while writes are followed: each head is read at once rather than at the next poll
   * (a write's outcome, and its webhook, then follow its confirming block by milliseconds, not up to a poll).
   */
  wakeups?: HeadWakeups;
}

const BATCH = 100;
/** Most blocks read per poll; a longer gap (idle, or the node raced ahead) is left to by-hash asks. */
const MAX_BLOCKS_PER_POLL = 32;
/** Blocks whose hashes are remembered, to find a fork point. */
const WINDOW = 256;
/**
 * Blocks whose confirmed writes are remembered, to undo their completion if the node goes back below them.
 * Memory is writes/s × block time × this, so it is kept short. A node that forgets more than 64 blocks is
 * beyond this: the journal walk (forgottenWrites.ts) reopens the rest.
 */
const CONFIRMED_WINDOW = 64;

/** What un-completing a confirmed write needs: no more (there may be hundreds of thousands). */
interface Confirmed {
  queueId: string;
  hash: string;
  runsCode: boolean;
  signer: string | undefined;
}

export class ChainFollower {
  /** Unconfirmed writes by hash (broadcast, maybe mined, not yet deep enough). */
  private readonly watched = new Map<string, Watched>();
  /** Hashes refused for good lately (fail), for waits that start after the refusal. */
  private readonly failed = new Map<string, Error>();
  /** Every hash tracked per submission (fee bumps add hashes). */
  private readonly hashesOf = new Map<string, string[]>();
  /** Recent blocks' hashes by number. */
  private readonly blocks = new Map<number, string>();
  /** When each of those was first walked (ms): a rewind's writes were mined after its fork block was. */
  private readonly walkedAt = new Map<number, number>();
  /** Writes confirmed in recent blocks, by block: a node that goes back below them un-completes them. */
  private readonly confirmedIn = new Map<number, Confirmed[]>();
  private readonly lagBySigner = new Map<string, number>();
  private lastBlock: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerFast = false;
  private polling = false;
  private rewindSuspected = false;
  /** A head was announced during a poll: poll again after it. */
  private pollAgain = false;
  private wakeupsOn = false;
  /** An idle follower's check of its last block is on its way (observeHead). */
  private checking = false;
  private waiting = 0;
  private rewinds = 0;
  private readonly fastPollMs: number;
  private readonly byHashAfterMs: number;

  constructor(private readonly options: ChainFollowerOptions) {
    this.byHashAfterMs = Math.max(1_000, options.pollMs * 8);
    this.fastPollMs = Math.max(10, Math.min(25, Math.round(options.pollMs / 5)));
  }

  /** Follows a broadcast transaction until it is confirmed; its journal record is completed then. */
  track(hash: string, queueId?: string, opts: TrackOptions = {}): void {
    const w = this.watched.get(hash);
    if (w) {
      if (w.queueId === undefined && queueId !== undefined) {
        w.queueId = queueId;
        this.sibling(queueId, hash);
      }
      if (opts.runsCode) w.runsCode = true;
    } else {
      this.watched.set(hash, { hash, queueId, signer: opts.signer, runsCode: opts.runsCode ?? true, superseded: false, waiters: [], askedAt: Date.now() });
      if (opts.signer) this.lagBySigner.set(opts.signer, (this.lagBySigner.get(opts.signer) ?? 0) + 1);
      if (queueId !== undefined) this.sibling(queueId, hash);
    }
    const seen = this.watched.get(hash)!;
    if (opts.minedIn && seen.block === undefined) {
      seen.block = opts.minedIn.block;
      seen.blockHash = opts.minedIn.blockHash;
      if (!seen.runsCode && seen.waiters.length === 0) seen.ok = true;
    }
    this.ensureTimer();
  }

  /** Stops following a write's hashes (an operator cancelled it: another transaction takes its nonce). */
  untrack(queueId: string): void {
    for (const hash of this.hashesOf.get(queueId) ?? []) {
      const w = this.watched.get(hash);
      if (!w) continue;
      this.watched.delete(hash);
      this.finished(w);
    }
    this.hashesOf.delete(queueId);
  }

  /**
   * The write under `hash` ended without a receipt (the node refused it for good): its waiters hear `err` now,
   * not when their wait runs out (a waited write answered 503 "not mined in time" 60 s after its status said
   * error). It is no longer followed.
   */
  fail(hash: string, err: Error): void {
    // Remembered a while: the caller may start waiting only after the refusal (the broadcast runs on its own).
    if (this.failed.size >= FAILED_KEPT) this.failed.delete(this.failed.keys().next().value!);
    this.failed.set(hash, err);
    const w = this.watched.get(hash);
    if (!w) return;
    this.watched.delete(hash);
    this.finished(w);
    for (const f of w.failers ?? []) f(err);
  }

  /** Resolves with the receipt once mined (not waiting for depth); rejects after timeoutMs or at fail(). */
  wait(hash: string, timeoutMs: number): Promise<RpcReceipt> {
    const failed = this.failed.get(hash);
    if (failed) return Promise.reject(failed);
    this.track(hash);
    this.waiting++;
    const promise = new Promise<RpcReceipt>((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        this.waiting--;
        return true;
      };
      const timer = setTimeout(() => settle() && reject(new Error(`not mined within ${timeoutMs} ms`)), timeoutMs);
      const w = this.watched.get(hash)!;
      w.waiters.push((r) => {
        clearTimeout(timer);
        if (settle()) resolve(r);
      });
      (w.failers ??= []).push((err) => {
        clearTimeout(timer);
        if (settle()) reject(err);
      });
    });
    this.ensureTimer();
    return promise;
  }

  /**
   * A head number seen elsewhere (the pool's probes): lower than what was walked means the node went back.
   * Higher, while writes confirmed in the last CONFIRMED_WINDOW blocks could still be undone, the idle follower
   * reads its last block walked again (one call per probe): a node that went back and mined past it between two
   * probes is only told by that block's hash.
   */
  observeHead(blockNumber: string | number): void {
    const n = Number(blockNumber);
    if (this.lastBlock === undefined) return;
    if (n < this.lastBlock && this.confirmedIn.size + this.watched.size > 0) {
      this.rewindSuspected = true;
      this.ensureTimer();
    } else if (n > this.lastBlock && !this.following && !this.checking) {
      this.forgetConfirmedBelow(n);
      if (this.confirmedIn.size > 0) void this.checkLastBlock();
    }
  }

  /** Idle: the last block walked, read again; another hash there starts a poll, whose walk finds the fork. */
  private async checkLastBlock(): Promise<void> {
    const last = this.lastBlock!;
    const known = this.blocks.get(last);
    if (known === undefined) return;
    this.checking = true;
    try {
      const now = (await this.blockHashes([last])).get(last);
      if (now !== undefined && now !== known && this.lastBlock === last) {
        this.rewindSuspected = true;
        this.ensureTimer();
      }
    } catch {
      // the next probe asks again
    } finally {
      this.checking = false;
    }
  }

  stats(): FollowerStats {
    let maxLag = 0;
    for (const n of this.lagBySigner.values()) if (n > maxLag) maxLag = n;
    return { unconfirmed: this.watched.size, lanesLagging: this.lagBySigner.size, maxLag, rewinds: this.rewinds };
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeupsOn = false;
    this.options.wakeups?.stop();
  }

  private get following(): boolean {
    return this.watched.size > 0 || this.rewindSuspected;
  }

  private sibling(queueId: string, hash: string): void {
    const hashes = this.hashesOf.get(queueId);
    if (!hashes) return void this.hashesOf.set(queueId, [hash]);
    for (const h of hashes) {
      const other = this.watched.get(h);
      if (other) other.superseded = true;
    }
    hashes.push(hash);
  }

  /** A head was announced: poll now (or right after the poll that is running). */
  private wake(): void {
    if (!this.following) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerFast = false;
    void this.poll().then(() => this.afterPoll());
  }

  private afterPoll(): void {
    if (this.pollAgain) {
      this.pollAgain = false;
      return this.wake();
    }
    if (this.following) this.ensureTimer();
    else if (this.wakeupsOn) {
      this.wakeupsOn = false;
      this.options.wakeups?.stop();
    }
  }

  /** One poll at a time, only while something is followed; sooner while someone waits. */
  private ensureTimer(): void {
    if (!this.wakeupsOn && this.options.wakeups) {
      this.wakeupsOn = true;
      this.options.wakeups.start(
        () => this.wake(),
        () => undefined,
      );
    }
    const fast = this.waiting > 0 || this.rewindSuspected;
    if (this.timer && (this.timerFast || !fast)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerFast = fast;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.poll().then(() => this.afterPoll());
      },
      fast ? this.fastPollMs : this.options.pollMs,
    );
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling || !this.following) return;
    this.polling = true;
    try {
      const head = Number(BigInt((await this.options.pool.call("eth_blockNumber", [])) as string));
      this.rewindSuspected = false;
      if (this.lastBlock !== undefined && head < this.lastBlock) await this.rewindTo(await this.forkPoint(head), head);
      await this.walk(head);
      await this.askByHash(Date.now() - this.byHashAfterMs);
      await this.confirm(head);
    } catch (err) {
      this.options.log.warn("chain follower poll failed; will retry", { error: (err as Error).message });
    } finally {
      this.polling = false;
    }
  }

  /** Reads the blocks after the last one walked, checking each one's parent, and matches their transactions. */
  private async walk(head: number): Promise<void> {
    const last = this.lastBlock;
    const from = Math.max((last ?? head - 1) + 1, head - MAX_BLOCKS_PER_POLL + 1);
    if (from > head) return;
    // Blocks left out (idle, out of reach, or the node raced ahead): the first block read has no parent to check,
    // so the last one walked is read again first. A node that went back and then mined past it (a restart on
    // older state during an outage) is noticed by that block's hash, not missed with its writes still completed.
    const recheck = last !== undefined && from > last + 1 && this.blocks.has(last) ? last : undefined;
    const numbers = [...(recheck === undefined ? [] : [recheck]), ...Array.from({ length: head - from + 1 }, (_, i) => from + i)];
    const outcomes = await this.options.pool.callMany(numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] as JsonValue[] })));
    const found: Watched[] = [];
    for (const [i, o] of outcomes.entries()) {
      // null: a node behind the one that gave the head; the block is read again next poll.
      if (!o.ok || o.result === null) break;
      const block = o.result as unknown as RpcBlock;
      const n = numbers[i]!;
      if (n === recheck && i === 0) {
        if (block.hash === this.blocks.get(n)) continue;
        await this.rewindTo(await this.forkPoint(n), head);
        break;
      }
      const parent = this.blocks.get(n - 1);
      if (parent !== undefined && parent !== block.parentHash) {
        await this.rewindTo(await this.forkPoint(n - 1), head);
        break;
      }
      this.blocks.set(n, block.hash);
      this.walkedAt.set(n, Date.now());
      // Ascending insertion, so the oldest come first (a gap left out leaves older ones than n - WINDOW).
      for (const b of this.blocks.keys()) {
        if (b > n - WINDOW) break;
        this.blocks.delete(b);
        this.walkedAt.delete(b);
      }
      for (const tx of block.transactions) {
        const w = this.watched.get(tx);
        if (w && w.block === undefined) {
          w.block = n;
          w.blockHash = block.hash;
          found.push(w);
        }
      }
      this.lastBlock = n;
    }
    await this.settle(found);
  }

  /** Outcomes of writes just seen in a block: receipts where they can revert or someone waits. */
  private async settle(found: Watched[]): Promise<void> {
    const needReceipts: [string, Watched][] = [];
    for (const w of found) {
      if (w.runsCode || w.waiters.length > 0) needReceipts.push([w.hash, w]);
      else w.ok = true; // runs no code: it cannot revert
    }
    for (let i = 0; i < needReceipts.length; i += BATCH) {
      const chunk = needReceipts.slice(i, i + BATCH);
      const outcomes = await this.options.pool.callMany(chunk.map(([h]) => ({ method: "eth_getTransactionReceipt", params: [h] as JsonValue[] })));
      outcomes.forEach((o, j) => {
        const [, w] = chunk[j]!;
        if (o.ok && o.result) this.minedWith(w, o.result as unknown as RpcReceipt);
        else w.block = undefined; // seen, but the node answering has no receipt yet: found again later
      });
    }
  }

  private minedWith(w: Watched, receipt: RpcReceipt): void {
    w.ok = receipt.status === "0x1";
    w.block = Number(BigInt(receipt.blockNumber));
    w.blockHash = receipt.blockHash;
    const waiters = w.waiters.splice(0);
    for (const f of waiters) f(receipt);
  }

  /** Asks by hash for writes not found in a walked block for a while (mined before the walk reached them). */
  private async askByHash(askedBefore: number): Promise<void> {
    const now = Date.now();
    const hashes: string[] = [];
    for (const [hash, w] of this.watched) {
      if (w.ok === undefined && w.askedAt < askedBefore) {
        w.askedAt = now;
        hashes.push(hash);
      }
    }
    for (let i = 0; i < hashes.length; i += BATCH) {
      const chunk = hashes.slice(i, i + BATCH);
      const outcomes = await this.options.pool.callMany(chunk.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] as JsonValue[] })));
      outcomes.forEach((o, j) => {
        const w = this.watched.get(chunk[j]!);
        if (w && o.ok && o.result) this.minedWith(w, o.result as unknown as RpcReceipt);
      });
    }
    // Seen in a block (minedIn) but no receipt by hash: the block's receipts, asked by number.
    const byBlock = new Map<number, Watched[]>();
    for (const h of hashes) {
      const w = this.watched.get(h);
      if (w && w.ok === undefined && w.block !== undefined) byBlock.set(w.block, [...(byBlock.get(w.block) ?? []), w]);
    }
    if (byBlock.size === 0) return;
    const blocks = [...byBlock.keys()];
    const outcomes = await this.options.pool.callMany(blocks.map((n) => ({ method: "eth_getBlockReceipts", params: [toHex(n)] as JsonValue[] })));
    outcomes.forEach((o, i) => {
      if (!o.ok || !Array.isArray(o.result)) return;
      const receipts = new Map((o.result as unknown as RpcReceipt[]).map((r) => [r.transactionHash.toLowerCase(), r]));
      for (const w of byBlock.get(blocks[i]!)!) {
        const r = receipts.get(w.hash.toLowerCase());
        if (r) this.minedWith(w, r);
      }
    });
  }

  /**
   * Writes `confirmations` deep on the chain walked are written to the journal as completed (or error). Only at
   * or below the last block walked: a receipt can name a block the walk has not reached, on a node that may not
   * keep it, and a rewind below the last block walked is what the walk notices (and reopens). A write whose
   * block the walk left out (it starts at the head, and skips long gaps) has that block read first: the hash
   * its receipt named must still be there.
   */
  private async confirm(head: number): Promise<void> {
    const last = this.lastBlock;
    const due: Watched[] = [];
    const unwalked = new Set<number>();
    if (last !== undefined)
      for (const w of this.watched.values()) {
        if (w.ok === undefined || w.block === undefined || w.block > last || head - w.block + 1 < this.options.confirmations) continue;
        due.push(w);
        if (!this.blocks.has(w.block)) unwalked.add(w.block);
      }
    const read = await this.blockHashes([...unwalked]);
    const done: Promise<void>[] = [];
    for (const w of due) {
      const hash = w.hash;
      if (w.block === undefined || this.watched.get(hash) !== w) continue; // a sibling confirmed first
      const onChain = this.blocks.get(w.block) ?? read.get(w.block);
      if (onChain === undefined) continue; // not readable now: next poll
      if (onChain !== w.blockHash) {
        // Its block was replaced: found again, by the walk or by hash.
        w.block = w.blockHash = w.ok = undefined;
        continue;
      }
      this.watched.delete(hash);
      this.finished(w);
      // A fee-bumped submission has several hashes for one nonce; once one is confirmed, the others never will.
      if (w.queueId) {
        for (const h of this.hashesOf.get(w.queueId) ?? []) {
          const other = this.watched.get(h);
          if (other && other !== w) {
            this.watched.delete(h);
            this.finished(other);
          }
        }
        this.hashesOf.delete(w.queueId);
        const list = this.confirmedIn.get(w.block) ?? [];
        list.push({ queueId: w.queueId, hash, runsCode: w.runsCode, signer: w.signer });
        this.confirmedIn.set(w.block, list);
        const queueId = w.queueId;
        done.push(
          this.options.store
            .update(queueId, {
              status: w.ok ? "completed" : "error",
              processedAt: new Date(),
              ...(w.superseded ? { hash } : {}),
              ...(w.ok ? {} : { errorMessage: "the transaction reverted on chain" }),
            })
            .catch((err: unknown) => {
              // Tried again at the next poll rather than left unfinished.
              this.track(hash, queueId, { runsCode: w.runsCode });
              this.options.log.warn("journal update failed; will retry", { queueId, error: (err as Error).message });
            }),
        );
      }
    }
    this.forgetConfirmedBelow(head);
    await Promise.all(done);
  }

  private forgetConfirmedBelow(head: number): void {
    for (const b of this.confirmedIn.keys()) if (b <= head - CONFIRMED_WINDOW) this.confirmedIn.delete(b);
  }

  /** Hashes of blocks by number, as the node has them now (a block it does not answer is left out). */
  private async blockHashes(numbers: number[]): Promise<Map<number, string>> {
    const hashes = new Map<number, string>();
    for (let i = 0; i < numbers.length; i += BATCH) {
      const chunk = numbers.slice(i, i + BATCH);
      const outcomes = await this.options.pool.callMany(chunk.map((n) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] as JsonValue[] })));
      outcomes.forEach((o, j) => {
        if (o.ok && o.result !== null) hashes.set(chunk[j]!, (o.result as unknown as RpcBlock).hash);
      });
    }
    return hashes;
  }

  private finished(w: Watched): void {
    if (!w.signer) return;
    const n = (this.lagBySigner.get(w.signer) ?? 1) - 1;
    if (n <= 0) this.lagBySigner.delete(w.signer);
    else this.lagBySigner.set(w.signer, n);
  }

  /** The highest block at or below `top` whose hash the node still agrees with (the walk's fork point). */
  private async forkPoint(top: number): Promise<number> {
    const known = [...this.blocks.keys()].filter((n) => n <= top).sort((a, b) => b - a);
    for (let i = 0; i < known.length; i += 16) {
      const chunk = known.slice(i, i + 16);
      const now = await this.blockHashes(chunk);
      for (const n of chunk) if (now.get(n) === this.blocks.get(n)) return n;
    }
    // None agrees: the fork is below everything remembered, and every write confirmed since is reopened (one
    // still on the chain is only sent again, which the node answers "already known" or "nonce too low").
    return Math.min(top, Math.min((known.at(-1) ?? top + 1) - 1, ...[...this.confirmedIn.keys()].map((b) => b - 1)));
  }

  /**
   * The node no longer has the blocks above `fork`: what was seen there is unseen, what was confirmed there
   * goes back to pending in the journal, and the sequencer re-sends the journal's signed bytes in nonce order.
   */
  private async rewindTo(fork: number, head: number): Promise<void> {
    const from = this.lastBlock ?? head;
    if (this.options.genesisHash !== undefined) {
      const genesis = (await this.options.pool.call("eth_getBlockByNumber", ["0x0", false])) as { hash?: string } | null;
      if (genesis?.hash !== this.options.genesisHash) {
        this.options.log.warn("the node answers for another chain (genesis differs): nothing re-sent to it", { genesis: genesis?.hash ?? null });
        return;
      }
    }
    let unseen = 0;
    for (const w of this.watched.values()) {
      if (w.block !== undefined && w.block > fork) {
        w.block = w.blockHash = w.ok = undefined;
        unseen++;
      }
    }
    const reopened: Promise<void>[] = [];
    for (const [b, list] of this.confirmedIn) {
      if (b <= fork) continue;
      this.confirmedIn.delete(b);
      for (const { queueId, hash, runsCode, signer } of list) {
        reopened.push(this.options.store.update(queueId, { status: "pending" }, { urgent: true }));
        this.track(hash, queueId, { runsCode, ...(signer ? { signer } : {}) });
      }
    }
    // Writes the node lost were mined after the fork block was walked; unknown (below what is remembered), the
    // oldest block remembered is the best bound there is.
    const forkWalkedAt = this.walkedAt.get(fork) ?? this.walkedAt.values().next().value;
    for (const n of [...this.blocks.keys()])
      if (n > fork) {
        this.blocks.delete(n);
        this.walkedAt.delete(n);
      }
    this.lastBlock = fork;
    this.rewinds++;
    await Promise.all(reopened);
    this.options.log.warn("the node went back: writes it no longer has are sent again from the journal", {
      from,
      fork,
      head,
      unseen,
      reopened: reopened.length,
    });
    await this.options.onRewind?.(fork, forkWalkedAt === undefined ? undefined : new Date(forkWalkedAt));
  }
}

function toHex(n: number): string {
  return "0x" + n.toString(16);
}
