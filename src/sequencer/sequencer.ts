// The sequencer of one network: takes a transaction to send from a gateway-held wallet, assigns its nonce,
// signs it and journals it (all before the caller gets the hash), then broadcasts it in nonce order with
// retries on transient upstream failures, and follows it until mined. The journal makes it durable: what
// was accepted is rebroadcast after an upstream outage or a restart until it is mined or rejected for good.
import { keccak256, Transaction } from "ethers";
import pRetry from "p-retry";
import { GatewayError } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { LaneReservation, SubmissionRecord, SubmissionStore } from "../store/submissionStore.js";
import type { Logger } from "../log/logger.js";
import { FeeOracle } from "./feeOracle.js";
import { NonceLane, type PendingSignature } from "./nonceLane.js";
import { ChainFollower, type FollowerStats, type RpcReceipt } from "./chainFollower.js";
import { signTransaction, signedTransaction } from "./signTransaction.js";
import { localGasLimit } from "./intrinsicGas.js";
import { resignAtNonce, resignWithHigherFees } from "./resign.js";
import { newQueueId } from "./queueId.js";
import { creditFeeDust, toQuantity, topUpSigner } from "./devChainFunds.js";
import type { FeeMode } from "../config/config.js";

export type { SigningWallet } from "./signTransaction.js";
import type { SigningWallet } from "./signTransaction.js";

export interface TxIntent {
  wallet: SigningWallet;
  /** null for a contract creation. */
  to: string | null;
  data: string;
  value?: bigint;
  kind: SubmissionRecord["kind"];
  idempotencyKey?: string;
}

export interface SequencerOptions {
  network: string;
  chainId: number;
  feeMode: FeeMode;
  pool: UpstreamPool;
  store: SubmissionStore;
  log: Logger;
  receiptPollMs: number;
  /** A write is completed once this many blocks hold it (its own included); until then it is watched. */
  confirmations?: number;
  /** The chain's genesis hash, when known: a node on another genesis is not taken for one that went back. */
  genesisHash?: string;
  /** Idle nonce lanes (and their wallets) kept in memory; past that the least recently used idle one goes. */
  maxIdleLanes?: number;
  /** Embedded dev chains only: top up signers with anvil_setBalance so market-fee writes can pay. */
  devFunding: boolean;
  /**
   * Embedded zero-fee chains only: a caller-signed transaction offering a tip (cast and forge always offer 1 wei)
   * from an account that cannot pay it gets the fee dust credited first, so unfunded accounts send unchanged.
   */
  creditFeeDust?: boolean;
  broadcastRetries?: number;
  /** How often journaled-but-unbroadcast transactions are retried in the background. */
  resumeIntervalMs?: number;
  /** Resolves signer addresses to the gateway's wallets (to refill nonces after a restart). */
  walletFor?: (address: string) => Promise<SigningWallet | undefined>;
  /** A broadcast transaction not mined after this long is sent again (fee networks: replaced with higher fees). */
  stuckAfterMs?: number;
  /** At most this many replacements per transaction, each +12.5 % (nodes require ≥ 10 %). */
  maxFeeBumps?: number;
  /** Metrics hooks. */
  observer?: { queueDepth(n: number): void; retry(): void; stuckLanes?(n: number): void };
}

const ALREADY_KNOWN = /already known|known transaction|already imported|AlreadyKnown|transaction already exists/i;
const NONCE_TOO_LOW = /nonce too low|nonce.*lower than/i;
/** The node refused the fees (the base fee rose past our cap): re-price and resend rather than give up. */
const FEE_TOO_LOW = /max fee per gas less than block base fee|fee cap less than block base fee|underpriced|feecap too low|gas price too low/i;
/** Gateway-signed kinds that can be signed again at another nonce (a caller's own bytes cannot; a refill is moot). */
const RESIGNABLE = new Set<SubmissionRecord["kind"]>(["message", "call", "deploy", "funding"]);
const NONCE_SPENT_RECHECK_MS = 1_000;
const NONCE_SPENT_TRUST_MS = 10_000;
/** Most submissions of one lane, and of all lanes, in one group commit (PostgreSQL: ≤ 65,535 parameters). */
const MAX_LANE_BATCH = 128;
const MAX_COMMIT_RECORDS = 512;
/** Most transactions one broadcast batch carries. */
const BROADCAST_BATCH = 100;
/**
 * Flow control: while the node answers, a lane holds at most this many transactions not yet sent (a batch on
 * its way and the next one ready); later submissions wait for their group commit, and their callers for the
 * answer, until a batch is through. Without it a closed loop of writes ran ahead of what anvil takes, and the
 * backlog took seconds to drain after the load (bench). With the node unreachable the lane journals freely,
 * for the background resume, as before.
 */
const MAX_UNSENT = 2 * BROADCAST_BATCH;

type BroadcastResult = "accepted" | "rejected" | "unreachable";

export class Sequencer {
  /** Nonce lanes by signer, least recently used first (see lane()). */
  private readonly lanes = new Map<string, NonceLane>();
  /** queueIds with a broadcast queued or running in this process. */
  private readonly inFlight = new Set<string>();
  /** This process's submissions that run no code (priced locally): followed without a receipt (cannot revert). */
  private readonly runNoCode = new WeakSet<SubmissionRecord>();
  private resumeTimer: NodeJS.Timeout | undefined;
  /** When this process first saw a transaction broadcast but unmined, and how often it was re-priced. */
  private readonly unmined = new Map<string, { since: number; bumps: number }>();
  /** Writes moved to a new nonce since the last resume pass, by signer: logged once per lane per pass. */
  private readonly moved = new Map<string, { count: number; first: number }>();
  /** Per signer: the node's mined nonce count when a spent nonce was last confirmed by a second look. */
  private readonly spentConfirmed = new Map<string, { count: number; at: number }>();
  private resuming: Promise<void> | undefined;
  /** Lanes with submissions waiting for the next group commit, which takes them all in one transaction. */
  private readonly lanesWaiting = new Set<NonceLane>();
  private commitScheduled = false;
  private committing = false;
  readonly fees: FeeOracle;
  readonly follower: ChainFollower;

  constructor(private readonly options: SequencerOptions) {
    this.fees = new FeeOracle(options.feeMode, options.pool);
    this.follower = new ChainFollower({
      pool: options.pool,
      store: options.store,
      pollMs: options.receiptPollMs,
      confirmations: options.confirmations ?? 1,
      log: options.log,
      onRewind: () => this.resendJournal(),
      ...(options.genesisHash ? { genesisHash: options.genesisHash } : {}),
    });
  }

  /** Lag and rewind figures for metrics: aggregates, never one series per signer. */
  stats(): FollowerStats & { lanes: number } {
    return { ...this.follower.stats(), lanes: this.lanes.size };
  }

  /**
   * After the node went back: every unfinished journaled write of this network is sent again, in nonce order
   * per signer ("already known" and "nonce too low" with the hash found both count as sent).
   */
  private async resendJournal(): Promise<void> {
    const unfinished = await this.options.store.listUnfinished(this.options.network, 100_000);
    for (const rec of unfinished) this.enqueue(rec);
  }

  /**
   * Picks up the journal: follows what was broadcast, rebroadcasts what was not (in nonce order), and keeps
   * doing so in the background so an upstream outage delays accepted writes but never loses them.
   */
  async start(): Promise<void> {
    await this.resume(true).catch((err: unknown) => this.options.log.warn("journal recovery deferred", { error: (err as Error).message }));
    this.resumeTimer = setInterval(() => void this.resume(false).catch(() => undefined), this.options.resumeIntervalMs ?? 2_000);
    this.resumeTimer.unref();
  }

  /**
   * Validates by estimating gas (a revert is thrown as an execution_reverted GatewayError and nothing is
   * sent; a call to the zero address cannot revert and is priced locally), then signs and journals;
   * returns once the transaction is journaled, with its hash.
   */
  async submit(intent: TxIntent): Promise<SubmissionRecord> {
    const { chainId, network } = this.options;
    this.refuseOnOtherChain();
    const from = intent.wallet.address;
    this.lane(from).wallet = intent.wallet;
    await this.fundIfDev(from);
    const value = intent.value ?? 0n;
    // A value-less call to the zero address runs no code: its gas is known without asking the node.
    const localGas = value === 0n ? localGasLimit(intent.to, intent.data) : undefined;
    const gasLimit = localGas ?? (await this.estimateGas(from, intent.to, intent.data, value));
    const fees = await this.fees.current();
    const lane = this.lane(from);
    const runNoCode = this.runNoCode;
    return new Promise<SubmissionRecord>((resolve, reject) => {
      lane.waiting.push({
        resolve,
        reject,
        async sign(nonce) {
          const { raw, hash } = signedTransaction(intent.wallet, { chainId, nonce, to: intent.to, data: intent.data, value, gasLimit, ...fees });
          const rec: SubmissionRecord = {
            queueId: newQueueId(),
            network,
            signer: from,
            nonce,
            hash,
            raw,
            kind: intent.kind,
            status: "pending",
            createdAt: new Date(),
            ...(intent.idempotencyKey ? { idempotencyKey: intent.idempotencyKey } : {}),
          };
          if (localGas !== undefined) runNoCode.add(rec);
          return rec;
        },
      });
      this.scheduleCommit(lane);
    });
  }

  /**
   * An unreachable node still lets writes be journaled (they go out when it is back); a node of another chain
   * (a new genesis) does not: what is journaled now could only go to the wrong chain, so the caller hears 503.
   */
  private refuseOnOtherChain(): void {
    if (this.options.pool.onlyOtherChains)
      throw new GatewayError(
        "upstream_unavailable",
        "no upstream node of this network's chain is available (the node reports another genesis); try again later",
      );
  }

  /** The node's estimate with 20 % headroom (state can move between the estimate and inclusion). */
  private async estimateGas(from: string, to: string | null, data: string, value: bigint): Promise<bigint> {
    const estimate = await this.options.pool.call("eth_estimateGas", [{ from, ...(to ? { to } : {}), data, value: toQuantity(value) }]);
    return (BigInt(estimate as string) * 12n) / 10n;
  }

  /**
   * Commits on the next turn of the event loop rather than at once: submissions whose estimates arrived in
   * the same I/O poll then share one group commit (the embedded store answers synchronously, so committing at once made
   * every batch a batch of one: the bench measured ~6 journal statements per write instead of a few per batch).
   */
  private scheduleCommit(lane: NonceLane): void {
    this.lanesWaiting.add(lane);
    if (this.commitScheduled || this.committing) return;
    this.commitScheduled = true;
    setImmediate(() => {
      this.commitScheduled = false;
      void this.commitWaiting();
    });
  }

  /**
   * Group commit across lanes: everything waiting gets consecutive nonces per signer, is signed and journaled
   * in one store transaction, then queued for broadcast in nonce order. (A transaction per lane had the bench's
   * 8-key run spend ~60 % of the gateway in its store, PGlite then.) Should that transaction fail, each lane is retried on its
   * own, so one lane's failure never fails another's submissions.
   */
  private async commitWaiting(): Promise<void> {
    if (this.committing) return;
    this.committing = true;
    const { pool, network, store } = this.options;
    try {
      while (this.lanesWaiting.size > 0) {
        const parts: { lane: NonceLane; batch: PendingSignature[] }[] = [];
        let records = 0;
        for (const lane of this.lanesWaiting) {
          if (records >= MAX_COMMIT_RECORDS) break;
          const room = lane.nodeAnswering ? Math.max(0, MAX_UNSENT - lane.unsent) : Infinity;
          const fits = Math.min(MAX_LANE_BATCH, MAX_COMMIT_RECORDS - records);
          const batch = lane.waiting.splice(0, Math.min(fits, room));
          records += batch.length;
          lane.unsent += batch.length;
          // A full lane is taken up again when its next batch is through (broadcastQueued).
          if (lane.waiting.length === 0 || room <= fits) this.lanesWaiting.delete(lane);
          if (batch.length > 0) parts.push({ lane, batch });
        }
        // The chain's view is read once per lane per process; the store never goes below it.
        const ready = (
          await Promise.all(
            parts.map(async (part) => {
              try {
                part.lane.next ??= Number(BigInt((await pool.call("eth_getTransactionCount", [part.lane.address, "pending"])) as string));
                return part;
              } catch (err) {
                this.released(part.lane, part.batch.length);
                for (const b of part.batch) b.reject(err);
                return undefined;
              }
            }),
          )
        ).filter((p) => p !== undefined);
        const reservation = ({ lane, batch }: (typeof parts)[number]): LaneReservation => ({
          signer: lane.address,
          chainPending: lane.next!,
          count: batch.length,
          build: (nonces) => Promise.all(batch.map((b, i) => b.sign(nonces[i]!))),
        });
        const journaled = (part: (typeof parts)[number], recs: SubmissionRecord[]): void => {
          part.lane.next = recs[recs.length - 1]!.nonce + 1;
          recs.forEach((r, i) => {
            this.enqueue(r, true);
            part.batch[i]!.resolve(r);
          });
        };
        try {
          const results = await store.reserveAndInsertLanes(network, ready.map(reservation));
          ready.forEach((part, i) => journaled(part, results[i]!));
        } catch (err) {
          // A lone lane has had its try; several are retried one by one.
          for (const part of ready) {
            try {
              if (ready.length > 1) journaled(part, (await store.reserveAndInsertLanes(network, [reservation(part)]))[0]!);
              else throw err;
            } catch (laneErr) {
              this.released(part.lane, part.batch.length);
              for (const b of part.batch) b.reject(laneErr);
            }
          }
        }
      }
    } finally {
      this.committing = false;
    }
  }

  /**
   * Submissions taken into a commit that failed leave the lane's unsent count; with no broadcast of theirs to
   * come, the lane's held submissions are taken up by the commit loop now rather than waiting for one.
   */
  private released(lane: NonceLane, count: number): void {
    lane.unsent -= count;
    if (lane.waiting.length > 0) this.lanesWaiting.add(lane);
  }

  /**
   * A transaction signed by the caller (key-path eth_sendRawTransaction): journaled, then broadcast. A node's
   * definite rejection is returned to the caller; an unreachable node is retried in the background.
   */
  async submitRaw(raw: string): Promise<string> {
    let tx: Transaction;
    try {
      tx = Transaction.from(raw);
    } catch {
      throw new GatewayError("invalid_params", "Invalid params: the raw transaction could not be decoded");
    }
    if (!tx.from || !tx.hash) throw new GatewayError("invalid_params", "Invalid params: the raw transaction is not signed");
    if (tx.chainId !== 0n && tx.chainId !== BigInt(this.options.chainId)) {
      throw new GatewayError("transaction_rejected", `the transaction is for chain id ${tx.chainId}, this network is ${this.options.chainId}`, {
        jsonRpcCode: -32003,
      });
    }
    this.refuseOnOtherChain();
    const existing = await this.options.store.getRawByHash(this.options.network, tx.hash);
    if (existing && existing.status !== "error") return existing.hash; // a retry: already journaled
    if (this.options.creditFeeDust) await creditFeeDust(this.options.pool, tx.from, tx);
    const rec: SubmissionRecord = {
      queueId: newQueueId(),
      network: this.options.network,
      signer: tx.from,
      nonce: tx.nonce,
      hash: tx.hash,
      raw,
      kind: "raw",
      status: "pending",
      createdAt: new Date(),
    };
    await this.options.store.insert(rec);
    this.inFlight.add(rec.queueId);
    try {
      const outcome = await this.broadcast(rec, { refill: false });
      if (outcome.result === "rejected") throw outcome.error;
    } finally {
      this.inFlight.delete(rec.queueId);
    }
    return rec.hash;
  }

  /** Waits until the transaction is mined. */
  waitForReceipt(hash: string, timeoutMs = 60_000): Promise<RpcReceipt> {
    return this.follower.wait(hash, timeoutMs);
  }

  /** Lets queued broadcasts finish (bounded), for a graceful shutdown. */
  async drain(timeoutMs = 5_000): Promise<void> {
    if (this.resumeTimer) clearInterval(this.resumeTimer);
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  stop(): void {
    if (this.resumeTimer) clearInterval(this.resumeTimer);
    this.follower.stop();
  }

  /**
   * A signer's lane, made on demand and kept in least-recently-used order. Past maxIdleLanes, idle lanes (nothing
   * waiting, queued or unsent) are dropped: a lane is a cached nonce and wallet, both found again on next use
   * (the store never hands out a nonce below what it journaled), so memory follows the active signers only.
   */
  private lane(address: string): NonceLane {
    let lane = this.lanes.get(address);
    if (lane) {
      this.lanes.delete(address);
      this.lanes.set(address, lane);
      return lane;
    }
    this.lanes.set(address, (lane = new NonceLane(address)));
    const max = this.options.maxIdleLanes ?? 10_000;
    if (this.lanes.size > max) {
      for (const [a, l] of this.lanes) {
        if (this.lanes.size <= max) break;
        if (l.idle) this.lanes.delete(a);
        else break; // the oldest is busy: try again on the next new lane rather than scan them all
      }
    }
    return lane;
  }

  /** `counted`: already in its lane's unsent count (taken by a group commit). */
  private enqueue(rec: SubmissionRecord, counted = false): void {
    const lane = this.lane(rec.signer);
    if (this.inFlight.has(rec.queueId)) {
      if (counted) lane.unsent--;
      return;
    }
    if (!counted) lane.unsent++;
    this.inFlight.add(rec.queueId);
    this.options.observer?.queueDepth(this.inFlight.size);
    lane.toBroadcast.push(rec);
    if (lane.broadcastScheduled) return;
    lane.broadcastScheduled = true;
    void lane.enqueueBroadcast(() => this.broadcastQueued(lane));
  }

  /**
   * Sends everything queued on a lane, in nonce order, as one JSON-RPC batch: one round trip for a whole group
   * commit instead of one per transaction. Whatever the batch did not get accepted (or the whole batch, if the
   * upstream failed) goes through broadcast() one by one, with its retries, re-pricing and nonce refill.
   */
  private async broadcastQueued(lane: NonceLane): Promise<void> {
    lane.broadcastScheduled = false;
    const recs = lane.toBroadcast.splice(0).sort((a, b) => a.nonce - b.nonce);
    const { pool, log } = this.options;
    for (let i = 0; i < recs.length; i += BROADCAST_BATCH) {
      const chunk = recs.slice(i, i + BROADCAST_BATCH);
      const outcomes =
        chunk.length > 1 ? await pool.callMany(chunk.map((r) => ({ method: "eth_sendRawTransaction", params: [r.raw] }))).catch(() => undefined) : undefined;
      if (chunk.length > 1) lane.nodeAnswering = outcomes !== undefined;
      for (const [j, rec] of chunk.entries()) {
        try {
          if (outcomes?.[j]?.ok) this.markBroadcast(rec);
          else {
            const { result } = await this.broadcast(rec, { refill: rec.kind !== "refill" && rec.kind !== "raw" });
            if (chunk.length === 1) lane.nodeAnswering = result !== "unreachable";
          }
        } catch (err) {
          log.error("broadcast failed; the journal keeps it for the next resume", { queueId: rec.queueId, error: (err as Error).message });
        } finally {
          lane.unsent--;
          this.inFlight.delete(rec.queueId);
          this.options.observer?.queueDepth(this.inFlight.size);
        }
      }
      // Room again: submissions held by flow control get their group commit.
      if (lane.waiting.length > 0) this.scheduleCommit(lane);
    }
  }

  private resume(includeProcessing: boolean): Promise<void> {
    this.resuming ??= (async () => {
      try {
        // Periodic passes only need what was never broadcast, plus (fee networks) what may be stuck; the
        // watcher already follows the rest. Start-up replays everything unfinished.
        const { store, network } = this.options;
        // A periodic pass skips records younger than one interval: this process is still broadcasting those,
        // and under load reading them back every pass held the event loop for long (bench/README.md).
        const before = includeProcessing ? undefined : new Date(Date.now() - (this.options.resumeIntervalMs ?? 2_000));
        // Zero-fee networks: what was broadcast but is still unmined after stuckAfterMs, for resendIfStuck.
        const stuckBefore = new Date(Date.now() - this.stuckAfterMs);
        const unfinished =
          includeProcessing || this.options.feeMode === "market"
            ? await store.listUnfinished(network, 10_000, before)
            : [...(await store.listByStatus(network, "pending", 10_000, before)), ...(await store.listByStatus(network, "processing", 10_000, stuckBefore))];
        const ids = new Set(unfinished.map((r) => r.queueId));
        const stuck = new Map<string, { count: number; first: number }>();
        for (const id of this.unmined.keys()) if (!ids.has(id)) this.unmined.delete(id);
        for (const rec of unfinished) {
          if (rec.status === "pending") this.enqueue(rec);
          else if (includeProcessing)
            this.enqueue(rec); // a restarted node may have lost its pool: resend ("already known" is fine)
          else {
            this.follower.track(rec.hash, rec.queueId, { signer: rec.signer });
            if (!(await this.bumpIfStuck(rec))) this.resendIfStuck(rec, stuck);
          }
        }
        // One line per stuck lane per pass, not one per transaction.
        for (const [signer, s] of stuck)
          this.options.log.warn("re-sending a lane's writes the node has not mined", { signer, count: s.count, firstNonce: s.first });
        for (const [signer, s] of this.moved)
          this.options.log.warn("the node spent nonces of writes it does not have: those writes were signed again at new nonces", {
            signer,
            count: s.count,
            firstNonce: s.first,
          });
        this.moved.clear();
        for (const [signer, c] of this.spentConfirmed) if (Date.now() - c.at > NONCE_SPENT_TRUST_MS) this.spentConfirmed.delete(signer);
        this.options.observer?.stuckLanes?.(stuck.size);
      } finally {
        this.resuming = undefined;
      }
    })();
    return this.resuming;
  }

  private async broadcast(rec: SubmissionRecord, opts: { refill: boolean }): Promise<{ result: BroadcastResult; error?: GatewayError }> {
    const { pool, store, log } = this.options;
    try {
      await pRetry(
        async () => {
          try {
            await pool.call("eth_sendRawTransaction", [rec.raw]);
          } catch (err) {
            if (err instanceof GatewayError && ALREADY_KNOWN.test(err.message)) return;
            // Our earlier attempt may have landed although its answer was lost.
            if (err instanceof GatewayError && NONCE_TOO_LOW.test(err.message) && (await pool.call("eth_getTransactionByHash", [rec.hash])) !== null) return;
            throw err;
          }
        },
        {
          retries: this.options.broadcastRetries ?? 6,
          minTimeout: 100,
          maxTimeout: 2_000,
          shouldRetry: ({ error }) => isTransient(error),
          onFailedAttempt: ({ error, attemptNumber }) => {
            if (isTransient(error)) this.options.observer?.retry();
            log.warn("broadcast attempt failed", { queueId: rec.queueId, attempt: attemptNumber, error: error.message });
          },
        },
      );
    } catch (err) {
      if (isTransient(err)) {
        // Still journaled as pending: the background resume sends it once the upstream is back.
        log.warn("broadcast deferred: upstream unreachable", { queueId: rec.queueId, nonce: rec.nonce });
        return { result: "unreachable" };
      }
      const error = err instanceof GatewayError ? err : new GatewayError("internal", String(err));
      if (FEE_TOO_LOW.test(error.message) && rec.kind !== "raw") {
        const repriced = await this.reprice(rec).catch(() => undefined);
        if (repriced) return this.broadcast(repriced, opts);
      }
      if (NONCE_TOO_LOW.test(error.message) && RESIGNABLE.has(rec.kind)) {
        const moved = await this.moveIfNonceSpent(rec).catch((e: unknown) => {
          log.warn("could not move a write to a new nonce", { queueId: rec.queueId, error: (e as Error).message });
          return undefined;
        });
        if (moved) return this.broadcast(moved, opts);
      }
      // A caller's own signed transaction refused by the node is the caller's doing (warn); ours is a fault (error).
      (rec.kind === "raw" ? log.warn : log.error)("broadcast rejected for good", { queueId: rec.queueId, nonce: rec.nonce, error: error.message });
      await store.update(rec.queueId, { status: "error", errorMessage: `the node rejected the transaction: ${error.message}`, processedAt: new Date() });
      if (opts.refill) await this.refillNonce(rec).catch((e: unknown) => log.error("nonce refill failed", { nonce: rec.nonce, error: (e as Error).message }));
      return { result: "rejected", error };
    }
    this.markBroadcast(rec);
    return { result: "accepted" };
  }

  /** The node has the transaction: journal it as processing and follow it until mined. */
  private markBroadcast(rec: SubmissionRecord): void {
    // Not awaited: the lane's next broadcast need not wait for the journal. Until the mark lands the record
    // still reads "pending", and a resume in between only resends it, which the node answers "already known".
    const { store, log } = this.options;
    if (rec.status === "pending")
      void store
        .update(rec.queueId, { status: "processing" })
        .catch((err: unknown) => log.warn("journal status update failed", { queueId: rec.queueId, error: (err as Error).message }));
    // Zero-fee networks never replace a transaction, so its signer's nonce passing it means it mined.
    this.follower.track(rec.hash, rec.queueId, { runsCode: !this.runNoCode.has(rec), signer: rec.signer });
  }

  /** Re-signs a fee-refused transaction at the same nonce with the current fees, at most maxFeeBumps times. */
  private async reprice(rec: SubmissionRecord): Promise<SubmissionRecord | undefined> {
    const seen = this.unmined.get(rec.queueId) ?? { since: Date.now(), bumps: 0 };
    this.unmined.set(rec.queueId, seen);
    const wallet = this.lanes.get(rec.signer)?.wallet ?? (await this.options.walletFor?.(rec.signer));
    if (!wallet || seen.bumps >= (this.options.maxFeeBumps ?? 3)) return undefined;
    // Give the base fee a block to show before re-reading it.
    await new Promise((r) => setTimeout(r, 250 * (seen.bumps + 1)));
    this.fees.invalidate();
    const raw = resignWithHigherFees(wallet, this.options.chainId, rec.raw, await this.fees.current());
    seen.bumps++;
    this.options.log.warn("re-pricing a transaction the node refused for its fees", { queueId: rec.queueId, nonce: rec.nonce, bump: seen.bumps });
    const hash = keccak256(raw);
    await this.options.store.update(rec.queueId, { hash, raw });
    return { ...rec, hash, raw };
  }

  /**
   * The node's account state has the write's nonce used, but no transaction under its hash: a node that lost
   * blocks while keeping later state (anvil's periodic dump is not atomic), or that took another transaction
   * of this signer at that nonce. Sending the same bytes can never succeed, so the write is signed again at the
   * lane's next nonce: same queueId, new hash (the status endpoint answers with it). Asked twice, a second
   * apart, so a node still catching up (or a lagging replica of the pool) is not taken for one that lost it.
   */
  private async moveIfNonceSpent(rec: SubmissionRecord): Promise<SubmissionRecord | undefined> {
    const { pool, store } = this.options;
    const wallet = this.lanes.get(rec.signer)?.wallet ?? (await this.options.walletFor?.(rec.signer));
    if (!wallet) return undefined;
    // A lane's writes tend to be lost together: one confirmed recheck covers its later ones for a while.
    const confirmed = this.spentConfirmed.get(rec.signer);
    const checks = confirmed && confirmed.count > rec.nonce && Date.now() - confirmed.at < NONCE_SPENT_TRUST_MS ? 1 : 2;
    for (let check = 0; check < checks; check++) {
      if (check > 0) await new Promise((r) => setTimeout(r, NONCE_SPENT_RECHECK_MS));
      const [known, receipt, mined] = await pool.callMany([
        { method: "eth_getTransactionByHash", params: [rec.hash] },
        { method: "eth_getTransactionReceipt", params: [rec.hash] },
        { method: "eth_getTransactionCount", params: [rec.signer, "latest"] },
      ]);
      if (!known?.ok || known.result !== null || !receipt?.ok || receipt.result !== null || !mined?.ok) return undefined;
      const count = Number(BigInt(mined.result as string));
      if (count <= rec.nonce) return undefined; // not spent: the usual retries apply
      if (check > 0) this.spentConfirmed.set(rec.signer, { count, at: Date.now() });
    }
    const lane = this.lane(rec.signer);
    const chainPending = Number(BigInt((await pool.call("eth_getTransactionCount", [rec.signer, "pending"])) as string));
    const moved = await store.moveToNextNonce(rec.queueId, Math.max(chainPending, lane.next ?? 0), async (nonce) => {
      const raw = resignAtNonce(wallet, this.options.chainId, rec.raw, nonce);
      return { raw, hash: keccak256(raw) };
    });
    lane.next = Math.max(lane.next ?? 0, moved.nonce + 1);
    this.unmined.delete(rec.queueId);
    const seen = this.moved.get(rec.signer) ?? { count: 0, first: rec.nonce };
    seen.count++;
    seen.first = Math.min(seen.first, rec.nonce);
    this.moved.set(rec.signer, seen);
    return moved;
  }

  private get stuckAfterMs(): number {
    return this.options.stuckAfterMs ?? 30_000;
  }

  /**
   * A transaction the node took but has not mined for stuckAfterMs is sent again as it is, and again each
   * stuckAfterMs after: a node that restarted or evicted it from its pool has lost it, and every later nonce
   * of its signer waits behind it. "already known" (the node still has it) and "nonce too low" with the hash
   * found (mined meanwhile) both count as sent.
   */
  private resendIfStuck(rec: SubmissionRecord, stuck: Map<string, { count: number; first: number }>): void {
    const now = Date.now();
    const seen = this.unmined.get(rec.queueId);
    if (now - rec.createdAt.getTime() < this.stuckAfterMs || (seen && now - seen.since < this.stuckAfterMs)) return;
    this.unmined.set(rec.queueId, { since: now, bumps: seen?.bumps ?? 0 });
    const lane = stuck.get(rec.signer);
    if (lane) lane.count++, (lane.first = Math.min(lane.first, rec.nonce));
    else stuck.set(rec.signer, { count: 1, first: rec.nonce });
    this.enqueue(rec);
  }

  /**
   * Fee networks: re-sign a long-unmined transaction at the same nonce with bounded higher fees. Returns
   * whether bumps look after this transaction (false: caller-signed, another network, or bumps used up).
   */
  private async bumpIfStuck(rec: SubmissionRecord): Promise<boolean> {
    if (this.options.feeMode !== "market" || rec.kind === "raw") return false;
    const seen = this.unmined.get(rec.queueId) ?? { since: Date.now(), bumps: 0 };
    this.unmined.set(rec.queueId, seen);
    if (seen.bumps >= (this.options.maxFeeBumps ?? 3)) return false;
    if (Date.now() - seen.since < this.stuckAfterMs) return true;
    const wallet = this.lanes.get(rec.signer)?.wallet ?? (await this.options.walletFor?.(rec.signer));
    if (!wallet) return false;
    this.fees.invalidate();
    const raw = resignWithHigherFees(wallet, this.options.chainId, rec.raw, await this.fees.current());
    const hash = keccak256(raw);
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
    this.follower.track(hash, rec.queueId, { signer: rec.signer });
    return true;
  }

  /** A nonce whose transaction was rejected for good is filled with a no-op self-transfer, so later ones mine. */
  private async refillNonce(rec: SubmissionRecord): Promise<void> {
    const wallet = this.lanes.get(rec.signer)?.wallet ?? (await this.options.walletFor?.(rec.signer));
    if (!wallet) return;
    const fees = await this.fees.current();
    const raw = signTransaction(wallet, { chainId: this.options.chainId, nonce: rec.nonce, to: rec.signer, data: "0x", value: 0n, gasLimit: 21_000n, ...fees });
    const filler: SubmissionRecord = {
      queueId: newQueueId(),
      network: rec.network,
      signer: rec.signer,
      nonce: rec.nonce,
      hash: keccak256(raw),
      raw,
      kind: "refill",
      status: "pending",
      createdAt: new Date(),
    };
    await this.options.store.insert(filler);
    await this.broadcast(filler, { refill: false });
  }

  private async fundIfDev(address: string): Promise<void> {
    const lane = this.lane(address);
    if (!this.options.devFunding || lane.funded) return;
    await topUpSigner(this.options.pool, address);
    lane.funded = true;
  }
}

function isTransient(err: unknown): boolean {
  return err instanceof GatewayError && err.kind === "upstream_unavailable";
}
