// What the sequencer does with a write the node will not take as it is, or took and has not mined: re-price a
// fee refusal, move a write whose nonce the node spent without it, resend or replace one left unmined, and
// fill the nonce of one rejected for good. It remembers per write (and per signer) what it already tried, so
// each remedy stays bounded; the sequencer decides when to ask and does the broadcasting.
import { keccak256 } from "ethers";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { FeeMode } from "../config/config.js";
import type { Logger } from "../log/logger.js";
import type { SubmissionRecord, SubmissionStore } from "../store/submissionStore.js";
import type { ChainFollower, MinedIn } from "./chainFollower.js";
import type { FeeOracle } from "./feeOracle.js";
import type { NonceLane } from "./nonceLane.js";
import { newQueueId } from "./queueId.js";
import { resignAtNonce, resignWithHigherFees } from "./resign.js";
import { type SigningWallet, signTransaction } from "./signTransaction.js";
import { NonceSpenders } from "./nonceSpender.js";

/** What moveIfNonceSpent found: signed again, already mined (under `hash`), or not proven either way. */
export type NonceSpentVerdict =
  | { kind: "moved"; rec: SubmissionRecord }
  /** On chain under `hash`; `minedIn` the block it was read from, when read whole (its receipt may be hidden). */
  | { kind: "mined"; hash: string; minedIn?: MinedIn }
  | { kind: "wait"; why: string };

export interface StuckWritesOptions {
  chainId: number;
  feeMode: FeeMode;
  pool: UpstreamPool;
  store: SubmissionStore;
  log: Logger;
  fees: FeeOracle;
  follower: ChainFollower;
  /** A broadcast write not mined after this long is sent again (fee networks: replaced with higher fees). */
  stuckAfterMs: number;
  /** At most this many re-pricings or replacements per write. */
  maxFeeBumps: number;
  /** Before a re-pricing, this long times the bumps so far (the base fee a block to show). */
  feeBumpWaitMs: number;
  /** The gateway's wallet of a signer, if it holds one. */
  walletOf(signer: string): Promise<SigningWallet | undefined>;
  /** The signer's nonce lane (a moved write takes the lane's next nonce). */
  lane(signer: string): NonceLane;
}

/** Per signer, over one resume pass: how many writes and the lowest nonce (one log line per lane, not per write). */
export type LaneTally = Map<string, { count: number; first: number }>;

export class StuckWrites {
  /** When this process first saw a write broadcast but unmined, and how often it was re-priced. */
  private readonly unmined = new Map<string, { since: number; bumps: number }>();
  /** Writes moved to a new nonce since the last pass, by signer. */
  private readonly moved: LaneTally = new Map();
  /** Where nonces were spent, as this pass read it from the node's blocks. */
  private readonly spenders: NonceSpenders;

  constructor(private readonly options: StuckWritesOptions) {
    this.spenders = new NonceSpenders(options.pool);
  }

  /** The gateway's wallet of a signer, if it holds one. */
  walletOf(signer: string): Promise<SigningWallet | undefined> {
    return this.options.walletOf(signer);
  }

  /** Re-signs a fee-refused write at the same nonce with the current fees, at most maxFeeBumps times. */
  async reprice(rec: SubmissionRecord): Promise<SubmissionRecord | undefined> {
    const seen = this.seen(rec);
    const wallet = await this.options.walletOf(rec.signer);
    if (!wallet || seen.bumps >= this.options.maxFeeBumps) return undefined;
    // Give the base fee a block to show before re-reading it.
    await new Promise((r) => setTimeout(r, this.options.feeBumpWaitMs * (seen.bumps + 1)));
    const { hash, raw } = await this.withHigherFees(wallet, rec);
    seen.bumps++;
    this.options.log.warn("re-pricing a transaction the node refused for its fees", { queueId: rec.queueId, nonce: rec.nonce, bump: seen.bumps });
    await this.options.store.update(rec.queueId, { hash, raw });
    return { ...rec, hash, raw };
  }

  /**
   * The node's account state has the write's nonce used. Sending the same bytes can never succeed; whether the
   * write is on chain is read from the block where the nonce was spent (nonceSpender.ts), never from a by-hash
   * lookup a node may answer null to: "mined" (the caller follows it), "absent" (another transaction, or none,
   * spent it: the write is signed again at the lane's next nonce, same queueId, new hash), or "wait" (not
   * proven either way: a duplicate is worse than a delay, so the write stays as it is until a later pass).
   * undefined: the nonce is not spent, the usual retries apply.
   */
  async moveIfNonceSpent(rec: SubmissionRecord): Promise<NonceSpentVerdict | undefined> {
    const { pool, store } = this.options;
    const wallet = await this.options.walletOf(rec.signer);
    if (!wallet) return undefined;
    const mined = Number(BigInt((await pool.call("eth_getTransactionCount", [rec.signer, "latest"])) as string));
    if (mined <= rec.nonce) return undefined;
    const spent = await this.spenders.of(rec, this.options.feeMode === "market");
    if (spent.verdict === "mined")
      return { kind: "mined", hash: spent.hash, ...(spent.blockHash ? { minedIn: { block: spent.block, blockHash: spent.blockHash } } : {}) };
    if (spent.verdict === "unknown") {
      this.options.log.warn("a write's nonce is spent but the node does not show by what: it waits rather than risk signing it twice", {
        queueId: rec.queueId,
        nonce: rec.nonce,
        why: spent.why,
      });
      return { kind: "wait", why: spent.why };
    }
    const lane = this.options.lane(rec.signer);
    const chainPending = Number(BigInt((await pool.call("eth_getTransactionCount", [rec.signer, "pending"])) as string));
    const moved = await store.moveToNextNonce(rec.queueId, Math.max(chainPending, lane.next ?? 0), async (nonce) => {
      const raw = await resignAtNonce(wallet, this.options.chainId, rec.raw, nonce);
      return { raw, hash: keccak256(raw) };
    });
    lane.next = Math.max(lane.next ?? 0, moved.nonce + 1);
    this.unmined.delete(rec.queueId);
    tally(this.moved, rec);
    return { kind: "moved", rec: moved };
  }

  /**
   * Zero-fee networks: whether a write the node took but has not mined for stuckAfterMs is due to be sent again
   * as it is (and again each stuckAfterMs after): a node that restarted or evicted it from its pool has lost it,
   * and every later nonce of its signer waits behind it. "already known" (the node still has it) and "nonce too
   * low" with the hash found (mined meanwhile) both count as sent. Counted into `stuck` when due.
   */
  dueForResend(rec: SubmissionRecord, stuck: LaneTally): boolean {
    const now = Date.now();
    const seen = this.unmined.get(rec.queueId);
    const after = this.options.stuckAfterMs;
    if (now - rec.createdAt.getTime() < after || (seen && now - seen.since < after)) return false;
    this.unmined.set(rec.queueId, { since: now, bumps: seen?.bumps ?? 0 });
    tally(stuck, rec);
    return true;
  }

  /**
   * Fee networks: re-sign a long-unmined write at the same nonce with bounded higher fees. Returns whether
   * bumps look after this write (false: caller-signed, another network, or bumps used up).
   */
  async bumpIfStuck(rec: SubmissionRecord): Promise<boolean> {
    if (this.options.feeMode !== "market" || rec.kind === "raw") return false;
    const seen = this.seen(rec);
    if (seen.bumps >= this.options.maxFeeBumps) return false;
    if (Date.now() - seen.since < this.options.stuckAfterMs) return true;
    const wallet = await this.options.walletOf(rec.signer);
    if (!wallet) return false;
    const { hash, raw } = await this.withHigherFees(wallet, rec);
    seen.bumps++;
    seen.since = Date.now();
    this.options.log.warn("replacing a stuck transaction with higher fees", { queueId: rec.queueId, nonce: rec.nonce, bump: seen.bumps });
    try {
      await this.options.pool.call("eth_sendRawTransaction", [raw]);
    } catch (err) {
      this.options.log.warn("fee bump refused", { queueId: rec.queueId, error: (err as Error).message });
      return true;
    }
    // The old hash may still mine; the watcher follows both and keeps whichever does.
    await this.options.store.update(rec.queueId, { hash, raw });
    this.options.follower.track(hash, rec.queueId, { signer: rec.signer });
    return true;
  }

  /** A no-op self-transfer at the nonce of a write rejected for good, journaled, so later ones can mine. */
  async filler(rec: SubmissionRecord): Promise<SubmissionRecord | undefined> {
    const wallet = await this.options.walletOf(rec.signer);
    if (!wallet) return undefined;
    const fees = await this.options.fees.current();
    const raw = await signTransaction(wallet, {
      chainId: this.options.chainId,
      nonce: rec.nonce,
      to: rec.signer,
      data: "0x",
      value: 0n,
      gasLimit: 21_000n,
      ...fees,
    });
    const filler = refillRecord(rec, raw, "pending");
    await this.options.store.insert(filler);
    return filler;
  }

  /** Start of a resume pass: what is no longer unfinished is forgotten. */
  keepOnly(unfinished: Set<string>): void {
    for (const id of this.unmined.keys()) if (!unfinished.has(id)) this.unmined.delete(id);
  }

  /** End of a resume pass: one line per lane for what was resent or moved, and old confirmations expire. */
  endPass(stuck: LaneTally): void {
    const { log } = this.options;
    for (const [signer, s] of stuck) log.warn("re-sending a lane's writes the node has not mined", { signer, count: s.count, firstNonce: s.first });
    for (const [signer, s] of this.moved)
      log.warn("the node spent nonces of writes it does not have: those writes were signed again at new nonces", {
        signer,
        count: s.count,
        firstNonce: s.first,
      });
    this.moved.clear();
    // A rewind can change a past block's state: each pass asks past states afresh (blocks read are kept while
    // the node still has them).
    this.spenders.newPass();
  }

  private seen(rec: SubmissionRecord): { since: number; bumps: number } {
    let seen = this.unmined.get(rec.queueId);
    if (!seen) this.unmined.set(rec.queueId, (seen = { since: Date.now(), bumps: 0 }));
    return seen;
  }

  private async withHigherFees(wallet: SigningWallet, rec: SubmissionRecord): Promise<{ hash: string; raw: string }> {
    this.options.fees.invalidate();
    const raw = await resignWithHigherFees(wallet, this.options.chainId, rec.raw, await this.options.fees.current());
    return { hash: keccak256(raw), raw };
  }
}

/** The journal record of a no-op (`raw`) taking `rec`'s nonce: a refill, its own queueId. */
export function refillRecord(rec: SubmissionRecord, raw: string, status: "pending" | "processing", createdAt = new Date()): SubmissionRecord {
  return { queueId: newQueueId(), network: rec.network, signer: rec.signer, nonce: rec.nonce, hash: keccak256(raw), raw, kind: "refill", status, createdAt };
}

function tally(byLane: LaneTally, rec: SubmissionRecord): void {
  const lane = byLane.get(rec.signer);
  if (lane) {
    lane.count++;
    lane.first = Math.min(lane.first, rec.nonce);
  } else byLane.set(rec.signer, { count: 1, first: rec.nonce });
}
