// The sequencer of one network: takes a transaction to send from a gateway-held wallet, assigns its nonce,
// signs it and journals it (all before the caller gets the hash), then broadcasts it in nonce order with
// retries on transient upstream failures, and follows it until mined. The journal makes it durable: what
// was accepted is rebroadcast after an upstream outage or a restart until it is mined or rejected for good.
// What to do with a write the node will not take as it is, or has not mined, is stuckWrites.ts's.
import { Transaction } from "ethers";
import pRetry from "p-retry";
import { GatewayError } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { RpcOutcome } from "../chain/upstreamReplies.js";
import type { LaneReservation, SubmissionRecord, SubmissionStore } from "../store/submissionStore.js";
import type { Logger } from "../log/logger.js";
import { FeeOracle } from "./feeOracle.js";
import { NonceLane, type PendingSignature } from "./nonceLane.js";
import { ChainFollower, type FollowerStats, type MinedIn, type RpcReceipt } from "./chainFollower.js";
import { signedTransaction } from "./signTransaction.js";
import { localGasLimit } from "./intrinsicGas.js";
import { newQueueId } from "./queueId.js";
import { creditFeeDust, toQuantity, topUpSigner } from "./devChainFunds.js";
import { type LaneTally, refillRecord, StuckWrites } from "./stuckWrites.js";
import { reopenForgottenWrites } from "./forgottenWrites.js";
import { NonceSpenders } from "./nonceSpender.js";
import { commitUnknown, mayBeRecorded } from "./unconfirmedCommit.js";
import { noopInPlaceOf } from "./resign.js";
import { inSpan, SpanKind, tracingOn } from "../trace/tracing.js";
import type { FeeMode } from "../config/config.js";
import type { HeadWakeups } from "../live/upstreamHeads.js";

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
  /** Retries of a broadcast the node answered with a transient error, and their doubling wait (config resilience.broadcast). */
  broadcastRetry?: { retries: number; firstMs: number; maxMs: number };
  /** Before re-pricing a write the node refused for its fees: this long times the bumps so far. */
  feeBumpWaitMs?: number;
  /** How often journaled-but-unbroadcast transactions are retried in the background. */
  resumeIntervalMs?: number;
  /** Resolves signer addresses to the gateway's wallets (to refill nonces after a restart). */
  walletFor?: (address: string) => Promise<SigningWallet | undefined>;
  /** A broadcast transaction not mined after this long is sent again (fee networks: replaced with higher fees). */
  stuckAfterMs?: number;
  /** A write the node took but does not hold (not in its pool, not mined) after this long is sent again. */
  droppedAfterMs?: number;
  /** At most this many replacements per transaction, each +12.5 % (nodes require ≥ 10 %). */
  maxFeeBumps?: number;
  /** The node's new-heads push: the chain follower reads each head at once while it follows writes. */
  headWakeups?: HeadWakeups;
  /** Metrics hooks. */
  observer?: { queueDepth(n: number): void; retry(): void; stuckLanes?(n: number): void; reopened?(n: number): void };
}

const ALREADY_KNOWN = /already known|known transaction|already imported|AlreadyKnown|transaction already exists/i;
const NONCE_TOO_LOW = /nonce too low|nonce.*lower than/i;
/** The node refused the fees (the base fee rose past our cap): re-price and resend rather than give up. */
const FEE_TOO_LOW = /max fee per gas less than block base fee|fee cap less than block base fee|underpriced|feecap too low|gas price too low/i;
/** Gateway-signed kinds that can be signed again at another nonce (a caller's own bytes cannot; a refill is moot). */
/** Processing writes looked up per pass for a node that dropped them, and per lookup batch. */
const DROPPED_LOOKUPS = 10_000;
const DROPPED_BATCH = 500;
const RESIGNABLE = new Set<SubmissionRecord["kind"]>(["message", "call", "deploy", "funding"]);
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

type BroadcastResult = "accepted" | "rejected" | "unreachable" | "waiting";

export class Sequencer {
  /** Nonce lanes by signer, least recently used first (see lane()). */
  private readonly lanes = new Map<string, NonceLane>();
  /** When the oldest write the last background pass found unfinished was made (journal time); none: undefined. */
  private oldestUnfinishedAt: number | undefined;
  /** queueIds with a broadcast queued or running in this process. */
  private readonly inFlight = new Set<string>();
  /** Of those, the ones recovery sent again (not a new write's first broadcast): see NonceLane.resending. */
  private readonly resent = new Set<string>();
  /** This process's submissions that run no code (priced locally): followed without a receipt (cannot revert). */
  private readonly runNoCode = new WeakSet<SubmissionRecord>();
  private resumeTimer: NodeJS.Timeout | undefined;
  /** The start's check of completed writes against the node has not succeeded yet (see reconcile). */
  private reconcileOwed = false;
  /** The bound of the owed check (see reconcile). */
  private reconcileSince: Date | undefined;
  /** When the last check of completed writes against the node succeeded (ms). */
  private reconciledAt = 0;
  private resuming: Promise<void> | undefined;
  /** Lanes with submissions waiting for the next group commit, which takes them all in one transaction. */
  private readonly lanesWaiting = new Set<NonceLane>();
  private commitScheduled = false;
  private committing = false;
  readonly fees: FeeOracle;
  readonly follower: ChainFollower;
  private readonly stuckWrites: StuckWrites;

  constructor(private readonly options: SequencerOptions) {
    this.fees = new FeeOracle(options.feeMode, options.pool);
    this.follower = new ChainFollower({
      pool: options.pool,
      store: options.store,
      pollMs: options.receiptPollMs,
      confirmations: options.confirmations ?? 1,
      log: options.log,
      onRewind: (_fork, forkWalkedAt) => this.resendJournal(forkWalkedAt),
      ...(options.headWakeups ? { wakeups: options.headWakeups } : {}),
      ...(options.genesisHash ? { genesisHash: options.genesisHash } : {}),
    });
    this.stuckWrites = new StuckWrites({
      ...options,
      fees: this.fees,
      follower: this.follower,
      stuckAfterMs: this.stuckAfterMs,
      maxFeeBumps: options.maxFeeBumps ?? 3,
      feeBumpWaitMs: options.feeBumpWaitMs ?? 250,
      walletOf: async (signer) => this.lanes.get(signer)?.wallet ?? (await options.walletFor?.(signer)),
      lane: (signer) => this.lane(signer),
    });
  }

  /** Lag and rewind figures for metrics: aggregates, never one series per signer. */
  stats(): FollowerStats & { lanes: number; oldestUnfinishedSeconds: number } {
    const oldest = this.oldestUnfinishedAt;
    return { ...this.follower.stats(), lanes: this.lanes.size, oldestUnfinishedSeconds: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000) };
  }

  /**
   * After the node went back: every unfinished journaled write of this network is sent again, in nonce order
   * per signer ("already known" and "nonce too low" with the hash found both count as sent).
   */
  private async resendJournal(forkWalkedAt: Date | undefined): Promise<void> {
    // Deeper than the follower remembers, the journal says what the node lost (forgottenWrites.ts). Ten
    // seconds before the fork block was walked: a write can be mined a little before its block is walked.
    await this.reconcile(forkWalkedAt && new Date(forkWalkedAt.getTime() - 10_000));
    const unfinished = await this.options.store.listUnfinished(this.options.network, 100_000);
    for (const rec of unfinished) this.enqueue(rec);
  }

  /**
   * Reopens completed writes the node does not hold. Owed again when the node did not answer (a start while it
   * is down): each periodic pass tries until one succeeds.
   */
  private async reconcile(since?: Date): Promise<void> {
    // An owed check keeps the earliest bound it was asked with: retried without it, the walk stopped at the
    // writes sent since the node came back (found) before reaching the ones it lost (42,452 left "completed").
    const bound = since && this.reconcileSince ? (since < this.reconcileSince ? since : this.reconcileSince) : (since ?? this.reconcileSince);
    try {
      await reopenForgottenWrites(
        {
          ...this.options,
          spenders: new NonceSpenders(this.options.pool),
          ...(this.options.observer?.reopened ? { onReopened: this.options.observer.reopened } : {}),
        },
        bound ? { since: bound } : {},
      );
      this.reconcileOwed = false;
      this.reconcileSince = undefined;
      this.reconciledAt = Date.now();
    } catch (err) {
      this.reconcileSince = bound;
      if (!this.reconcileOwed)
        this.options.log.warn("could not check the journal's completed writes against the node; will retry", { error: (err as Error).message });
      this.reconcileOwed = true;
    }
  }

  /**
   * Picks up the journal: follows what was broadcast, rebroadcasts what was not (in nonce order), and keeps
   * doing so in the background so an upstream outage delays accepted writes but never loses them.
   */
  async start(): Promise<void> {
    // The node may have gone back while no gateway watched it (a restart on older state, the embedded chain's
    // older dump): nothing followed tells, the journal does.
    await this.reconcile();
    await this.resume(true).catch((err: unknown) => this.options.log.warn("journal recovery deferred", { error: (err as Error).message }));
    this.resumeTimer = setInterval(() => {
      void (this.reconcileOwed ? this.reconcile() : Promise.resolve()).then(() => this.resume(false)).catch(() => undefined);
    }, this.options.resumeIntervalMs ?? 2_000);
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
      const entry: PendingSignature = {
        resolve,
        reject,
        async sign(nonce) {
          const { raw, hash } = await signedTransaction(intent.wallet, { chainId, nonce, to: intent.to, data: intent.data, value, gasLimit, ...fees });
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
          entry.signed = rec;
          return rec;
        },
      };
      lane.waiting.push(entry);
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
   * Commits on a later turn of the event loop rather than at once: submissions whose estimates arrived in
   * the same I/O poll then share one group commit (the embedded store answers synchronously, so committing at once made
   * every batch a batch of one).
   * Two immediates, not one: undici writes a request on a kept-alive connection only from an immediate of its
   * own (it first lets the poll see anything the node sent unasked, GHSA-35p6-xmwp-9g52), and immediates run in
   * the order queued. A commit queued first, signing up to a few hundred transactions, held back every request
   * started in the same turn, among them the lane's next broadcast; flow control then let fewer writes in.
   */
  private scheduleCommit(lane: NonceLane): void {
    this.lanesWaiting.add(lane);
    if (this.commitScheduled || this.committing) return;
    this.commitScheduled = true;
    setImmediate(() =>
      setImmediate(() => {
        this.commitScheduled = false;
        void this.commitWaiting();
      }),
    );
  }

  /**
   * Group commit across lanes: everything waiting gets consecutive nonces per signer, is signed and journaled
   * in one store transaction, then queued for broadcast in nonce order (one transaction, not one per lane: the
   * store's cost is per transaction). Should that transaction fail, each lane is retried on its
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
          // Not while the lane sends recovery's writes again (NonceLane.resending).
          const room = lane.nodeAnswering && lane.resending === 0 ? Math.max(0, MAX_UNSENT - lane.unsent) : Infinity;
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
          build: (nonces) => {
            const sign = () => Promise.all(batch.map((b, i) => b.sign(nonces[i]!)));
            return tracingOn ? inSpan("sequencer sign", SpanKind.INTERNAL, sign) : sign();
          },
        });
        const journaled = (part: (typeof parts)[number], recs: SubmissionRecord[]): void => {
          part.lane.next = recs[recs.length - 1]!.nonce + 1;
          recs.forEach((r, i) => {
            this.enqueue(r, true);
            part.batch[i]!.resolve(r);
          });
        };
        try {
          const journal = () => store.reserveAndInsertLanes(network, ready.map(reservation));
          const results = await (tracingOn ? inSpan("sequencer journal", SpanKind.INTERNAL, journal) : journal());
          ready.forEach((part, i) => journaled(part, results[i]!));
        } catch (err) {
          // A commit that may have landed is never retried (that would journal each write twice): each caller
          // hears its queueId, and what did land is sent by the next journal pass like any pending write.
          if (commitUnknown(err)) {
            for (const part of ready) {
              this.released(part.lane, part.batch.length);
              for (const b of part.batch) b.reject(mayBeRecorded(err, b.signed));
            }
            continue;
          }
          // A lone lane has had its try; several are retried one by one.
          for (const part of ready) {
            try {
              if (ready.length > 1) journaled(part, (await store.reserveAndInsertLanes(network, [reservation(part)]))[0]!);
              else throw err;
            } catch (laneErr) {
              this.released(part.lane, part.batch.length);
              for (const b of part.batch) b.reject(commitUnknown(laneErr) ? mayBeRecorded(laneErr, b.signed) : laneErr);
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
  /**
   * The node stopped answering a lane's broadcasts: from now it journals freely (flow control holds writes only
   * while the node takes them), and the writes flow control held get their commit now, not after the retries of
   * a whole batch. They waited 12 s and more through a node's restart.
   */
  private nodeStoppedAnswering(lane: NonceLane): void {
    if (lane.waiting.length > 0) this.scheduleCommit(lane);
  }

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
  /** Unfinished writes of this network created over `olderThanMs` ago, by signer and nonce (the admin API's). */
  listStuck(olderThanMs: number, limit: number): Promise<SubmissionRecord[]> {
    return this.options.store.listUnfinished(this.options.network, limit, new Date(Date.now() - olderThanMs));
  }

  /** Sends an unfinished write to the node again now (an operator's ResendWrite); the broadcast runs as usual. */
  async resend(queueId: string): Promise<SubmissionRecord> {
    const rec = await this.unfinished(queueId);
    this.enqueue(rec);
    return rec;
  }

  /**
   * Ends an unfinished gateway-signed write as "error" (an operator's CancelWrite): a no-op self-transfer takes its
   * nonce (fee networks: with the fees a replacement needs), so the signer's later writes can mine. The no-op is
   * sent first: a node that refuses it leaves the write as it was. It is then journaled (a "refill") and
   * followed; the write is no longer followed. Should the write itself mine first after all, the no-op fails
   * "nonce too low" and the write's record says error although it ran: cancel what the node does not mine.
   */
  async cancel(queueId: string, reason: string): Promise<{ write: SubmissionRecord; filler: SubmissionRecord }> {
    const rec = await this.unfinished(queueId);
    if (rec.kind === "raw") throw new GatewayError("conflict", "a caller-signed transaction cannot be cancelled by the gateway: it holds no key for it");
    if (rec.kind === "refill") throw new GatewayError("conflict", "this is the gateway's own no-op filling a nonce: resend it instead");
    if (this.inFlight.has(queueId)) throw new GatewayError("conflict", "the write is being sent right now: try again in a moment");
    const wallet = await this.stuckWrites.walletOf(rec.signer);
    if (!wallet) throw new GatewayError("conflict", `the gateway holds no wallet for ${rec.signer}`);
    const { pool, store, chainId, feeMode, log } = this.options;
    const raw = await noopInPlaceOf(wallet, chainId, rec.raw, await this.fees.current(), feeMode === "zero");
    try {
      await pool.call("eth_sendRawTransaction", [raw]);
    } catch (err) {
      if (!(err instanceof GatewayError && ALREADY_KNOWN.test(err.message)))
        throw new GatewayError("conflict", `the node refused the no-op at nonce ${rec.nonce}: ${(err as Error).message}`, { cause: err });
    }
    const processedAt = new Date();
    await store.update(rec.queueId, { status: "error", errorMessage: reason, processedAt }, { urgent: true });
    // Sent already: journaled as the node has it.
    const filler = refillRecord(rec, raw, "processing", processedAt);
    await store.insert(filler);
    this.follower.untrack(rec.queueId);
    this.follower.track(filler.hash, filler.queueId, { signer: filler.signer, runsCode: false });
    log.warn("write cancelled: a no-op took its nonce", { queueId: rec.queueId, nonce: rec.nonce, filler: filler.queueId });
    return { write: { ...rec, status: "error", errorMessage: reason, processedAt }, filler };
  }

  /** This network's unfinished write with that queueId, or a not_found / conflict error. */
  private async unfinished(queueId: string): Promise<SubmissionRecord> {
    const rec = await this.options.store.get(queueId);
    if (!rec || rec.network !== this.options.network) throw new GatewayError("not_found", `no write of this network has the queueId "${queueId}"`);
    if (rec.status === "completed" || rec.status === "error") throw new GatewayError("conflict", `the write is already ${rec.status}`);
    return rec;
  }

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
    if (!counted) {
      lane.unsent++;
      lane.resending++;
      this.resent.add(rec.queueId);
      // Flow control holds nothing while the lane resends: what it held is taken now.
      if (lane.waiting.length > 0) this.scheduleCommit(lane);
    }
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
  private broadcastQueued(lane: NonceLane): Promise<void> {
    return tracingOn ? inSpan("sequencer broadcast", SpanKind.INTERNAL, () => this.broadcastLane(lane)) : this.broadcastLane(lane);
  }

  private async broadcastLane(lane: NonceLane): Promise<void> {
    lane.broadcastScheduled = false;
    const recs = lane.toBroadcast.splice(0).sort((a, b) => a.nonce - b.nonce);
    const { pool, log } = this.options;
    for (let i = 0; i < recs.length; i += BROADCAST_BATCH) {
      const chunk = recs.slice(i, i + BROADCAST_BATCH);
      const outcomes =
        chunk.length > 1 ? await pool.callMany(chunk.map((r) => ({ method: "eth_sendRawTransaction", params: [r.raw] }))).catch(() => undefined) : undefined;
      if (chunk.length > 1) {
        lane.nodeAnswering = outcomes !== undefined;
        if (!lane.nodeAnswering) this.nodeStoppedAnswering(lane);
      }
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
          if (this.resent.delete(rec.queueId)) lane.resending--;
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
        // Zero-fee networks: what was broadcast but is still unmined after stuckAfterMs (StuckWrites.dueForResend).
        const stuckBefore = new Date(Date.now() - this.stuckAfterMs);
        const unfinished =
          includeProcessing || this.options.feeMode === "market"
            ? await store.listUnfinished(network, 10_000, before)
            : [...(await store.listByStatus(network, "pending", 10_000, before)), ...(await store.listByStatus(network, "processing", 10_000, stuckBefore))];
        this.stuckWrites.keepOnly(new Set(unfinished.map((r) => r.queueId)));
        this.oldestUnfinishedAt = unfinished.reduce<number | undefined>(
          (min, r) => Math.min(min ?? Number.POSITIVE_INFINITY, r.createdAt.getTime()),
          undefined,
        );
        const stuck: LaneTally = new Map();
        for (const rec of unfinished) {
          if (rec.status === "pending") this.enqueue(rec);
          else if (includeProcessing)
            this.enqueue(rec); // a restarted node may have lost its pool: resend ("already known" is fine)
          else {
            this.follower.track(rec.hash, rec.queueId, { signer: rec.signer });
            if (!(await this.stuckWrites.bumpIfStuck(rec)) && this.stuckWrites.dueForResend(rec, stuck)) this.enqueue(rec);
          }
        }
        if (!includeProcessing) await this.resendDropped(stuckBefore);
        this.stuckWrites.endPass(stuck);
        this.options.observer?.stuckLanes?.(stuck.size);
        // A lane that stopped moving may wait behind a write the journal has as completed and the node lost
        // without this gateway seeing it go back (another replica followed, or the node swapped its state between
        // two polls): the check of completed writes runs again, at most once a stuck period.
        const lagging = unfinished.some((r) => r.status === "processing" && r.createdAt < stuckBefore);
        if (lagging && Date.now() - this.reconciledAt >= this.stuckAfterMs) this.reconcileOwed = true;
      } finally {
        this.resuming = undefined;
      }
    })();
    return this.resuming;
  }

  /**
   * Writes the node answered but does not hold (not in its pool, not in a block): a node that drops sends
   * (answers the hash, never forwards it) left them for the 30 s stuck timer. Looked up after droppedAfterMs
   * and sent again as they are (the same bytes: a node that has them says "already known").
   */
  private async resendDropped(stuckBefore: Date): Promise<void> {
    const { store, network, pool, log } = this.options;
    const droppedBefore = new Date(Date.now() - (this.options.droppedAfterMs ?? 5_000));
    const recent = (await store.listByStatus(network, "processing", DROPPED_LOOKUPS, droppedBefore)).filter(
      (r) => r.createdAt >= stuckBefore && !this.inFlight.has(r.queueId),
    );
    if (recent.length === 0) return;
    const held: RpcOutcome[] = [];
    for (let at = 0; at < recent.length; at += DROPPED_BATCH) {
      const chunk = recent.slice(at, at + DROPPED_BATCH).map((r) => ({ method: "eth_getTransactionByHash", params: [r.hash] }));
      const answers = await pool.callMany(chunk).catch(() => undefined);
      if (!answers) return;
      held.push(...answers);
    }
    const dropped = recent.filter((_, i) => {
      const answer = held[i];
      return answer?.ok === true && answer.result === null;
    });
    for (const rec of dropped) this.enqueue(rec);
    if (dropped.length === 0) return;
    // The nodes that took them dropped them: one that keeps doing so is sent no writes for a while.
    pool.droppedWrites(dropped.map((r) => r.hash));
    log.warn("the node does not hold writes it answered: sent again", { count: dropped.length });
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
          retries: this.options.broadcastRetry?.retries ?? 6,
          minTimeout: this.options.broadcastRetry?.firstMs ?? 100,
          maxTimeout: this.options.broadcastRetry?.maxMs ?? 2_000,
          shouldRetry: ({ error }) => isTransient(error),
          onFailedAttempt: ({ error, attemptNumber }) => {
            if (isTransient(error)) {
              this.options.observer?.retry();
              const lane = this.lanes.get(rec.signer);
              if (lane?.nodeAnswering) {
                lane.nodeAnswering = false;
                this.nodeStoppedAnswering(lane);
              }
            }
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
        const repriced = await this.stuckWrites.reprice(rec).catch(() => undefined);
        if (repriced) return this.broadcast(repriced, opts);
      }
      if (NONCE_TOO_LOW.test(error.message) && RESIGNABLE.has(rec.kind)) {
        const spent = await this.stuckWrites.moveIfNonceSpent(rec).catch((e: unknown) => {
          log.warn("could not tell what spent a write's nonce: it waits", { queueId: rec.queueId, error: (e as Error).message });
          return { kind: "wait" as const, why: (e as Error).message };
        });
        if (spent?.kind === "moved") return this.broadcast(spent.rec, opts);
        if (spent?.kind === "mined") {
          // On chain under `hash` (its own, or an earlier signing's): followed as any broadcast write is.
          if (spent.hash !== rec.hash) await this.options.store.update(rec.queueId, { hash: spent.hash });
          this.markBroadcast(spent.hash === rec.hash ? rec : { ...rec, hash: spent.hash }, spent.minedIn);
          return { result: "accepted" };
        }
        // Not proven absent: journaled as it is, tried again by a later pass.
        if (spent?.kind === "wait") return { result: "waiting" };
      }
      // A caller's own signed transaction refused by the node is the caller's doing (warn); ours is a fault (error).
      (rec.kind === "raw" ? log.warn : log.error)("broadcast rejected for good", { queueId: rec.queueId, nonce: rec.nonce, error: error.message });
      await store.update(rec.queueId, { status: "error", errorMessage: `the node rejected the transaction: ${error.message}`, processedAt: new Date() });
      this.follower.fail(
        rec.hash,
        new GatewayError("transaction_rejected", `the node rejected the transaction: ${error.message}`, { details: { hash: rec.hash, queueId: rec.queueId } }),
      );
      if (opts.refill) await this.refillNonce(rec).catch((e: unknown) => log.error("nonce refill failed", { nonce: rec.nonce, error: (e as Error).message }));
      return { result: "rejected", error };
    }
    this.markBroadcast(rec);
    return { result: "accepted" };
  }

  /** The node has the transaction: journal it as processing and follow it until mined. */
  /** `minedIn`: where the write was already seen mined (a block read whole), for a node hiding its receipt. */
  private markBroadcast(rec: SubmissionRecord, minedIn?: MinedIn): void {
    // Not awaited: the lane's next broadcast need not wait for the journal. Until the mark lands the record
    // still reads "pending", and a resume in between only resends it, which the node answers "already known".
    const { store, log } = this.options;
    if (rec.status === "pending")
      void store
        .update(rec.queueId, { status: "processing" })
        .catch((err: unknown) => log.warn("journal status update failed", { queueId: rec.queueId, error: (err as Error).message }));
    // Zero-fee networks never replace a transaction, so its signer's nonce passing it means it mined.
    this.follower.track(rec.hash, rec.queueId, { runsCode: !this.runNoCode.has(rec), signer: rec.signer, ...(minedIn ? { minedIn } : {}) });
  }

  private get stuckAfterMs(): number {
    return this.options.stuckAfterMs ?? 30_000;
  }

  /** A nonce whose transaction was rejected for good is filled with a no-op self-transfer, so later ones mine. */
  private async refillNonce(rec: SubmissionRecord): Promise<void> {
    const filler = await this.stuckWrites.filler(rec);
    if (filler) await this.broadcast(filler, { refill: false });
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
