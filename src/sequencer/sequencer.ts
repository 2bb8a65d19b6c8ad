// The sequencer of one network: takes a transaction to send from a gateway-held wallet, assigns its nonce,
// signs it, journals it (all before the caller gets the hash), then broadcasts it in nonce order with
// retries on transient upstream failures, and follows it until mined.
import { randomUUID } from "node:crypto";
import { keccak256, type Wallet, type HDNodeWallet } from "ethers";
import pRetry from "p-retry";
import { GatewayError, type JsonValue } from "../errors.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { SubmissionRecord, SubmissionStore } from "../store/submissionStore.js";
import type { Logger } from "../log/logger.js";
import { FeeOracle } from "./feeOracle.js";
import { NonceLane } from "./nonceLane.js";
import { ReceiptWatcher, type RpcReceipt } from "./receiptWatcher.js";
import type { FeeMode } from "../config/config.js";

export type SigningWallet = Wallet | HDNodeWallet;

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
  /** Embedded dev chains only: top up signers with anvil_setBalance so market-fee writes can pay. */
  devFunding: boolean;
  broadcastRetries?: number;
}

const ALREADY_KNOWN = /already known|known transaction|already imported|AlreadyKnown/i;
const NONCE_TOO_LOW = /nonce too low|nonce.*lower than/i;
const DEV_BALANCE = 10n ** 24n; // 1,000,000 ether of dev-chain money

export class Sequencer {
  private readonly lanes = new Map<string, NonceLane>();
  private readonly funded = new Set<string>();
  private readonly walletOf = new Map<string, SigningWallet>();
  readonly fees: FeeOracle;
  readonly receipts: ReceiptWatcher;

  constructor(private readonly options: SequencerOptions) {
    this.fees = new FeeOracle(options.feeMode, options.pool);
    this.receipts = new ReceiptWatcher(options.pool, options.store, options.receiptPollMs, options.log);
  }

  /**
   * Validates by estimating gas (a revert is thrown as an execution_reverted GatewayError and nothing is
   * sent), then signs and journals; returns once the transaction is journaled, with its hash.
   */
  async submit(intent: TxIntent): Promise<SubmissionRecord> {
    const { pool, chainId } = this.options;
    const from = intent.wallet.address;
    this.walletOf.set(from, intent.wallet);
    await this.fundIfDev(from);
    const value = intent.value ?? 0n;
    const estimate = await pool.call("eth_estimateGas", [{ from, ...(intent.to ? { to: intent.to } : {}), data: intent.data, value: toQuantity(value) }]);
    // 20 % headroom: state can move between the estimate and inclusion.
    const gasLimit = (BigInt(estimate as string) * 12n) / 10n;
    const fees = await this.fees.current();
    const lane = this.lane(from);
    const record = await lane.exclusive(async () => {
      if (lane.next === undefined) lane.next = Number(BigInt((await pool.call("eth_getTransactionCount", [from, "pending"])) as string));
      const nonce = lane.next;
      const raw = await intent.wallet.signTransaction({ chainId, nonce, to: intent.to, data: intent.data, value, gasLimit, ...fees });
      const rec: SubmissionRecord = {
        queueId: randomUUID(),
        network: this.options.network,
        signer: from,
        nonce,
        hash: keccak256(raw),
        raw,
        kind: intent.kind,
        status: "pending",
        createdAt: new Date(),
        ...(intent.idempotencyKey ? { idempotencyKey: intent.idempotencyKey } : {}),
      };
      await this.options.store.insert(rec);
      lane.next = nonce + 1; // consumed only once journaled
      return rec;
    });
    void lane.enqueueBroadcast(() => this.broadcast(record, lane));
    return record;
  }

  /** Waits until the transaction is mined. */
  waitForReceipt(hash: string, timeoutMs = 60_000): Promise<RpcReceipt> {
    return this.receipts.wait(hash, timeoutMs);
  }

  stop(): void {
    this.receipts.stop();
  }

  private lane(address: string): NonceLane {
    let lane = this.lanes.get(address);
    if (!lane) this.lanes.set(address, (lane = new NonceLane(address)));
    return lane;
  }

  private async broadcast(rec: SubmissionRecord, lane: NonceLane): Promise<void> {
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
          retries: this.options.broadcastRetries ?? 8,
          minTimeout: 100,
          maxTimeout: 3_000,
          shouldRetry: ({ error }) => error instanceof GatewayError && error.kind === "upstream_unavailable",
          onFailedAttempt: ({ error, attemptNumber }) => log.warn("broadcast attempt failed", { queueId: rec.queueId, attempt: attemptNumber, error: error.message }),
        },
      );
      await store.update(rec.queueId, { status: "processing" });
      this.receipts.track(rec.hash, rec.queueId);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.error("broadcast failed for good", { queueId: rec.queueId, nonce: rec.nonce, error: message });
      await store.update(rec.queueId, { status: "error", errorMessage: `the node rejected the transaction: ${message}`, processedAt: new Date() });
      if (rec.kind !== "refill") await this.refillNonce(rec, lane);
    }
  }

  /** A nonce whose transaction was rejected for good is filled with a no-op self-transfer, so later ones mine. */
  private async refillNonce(rec: SubmissionRecord, lane: NonceLane): Promise<void> {
    const { chainId } = this.options;
    const wallet = this.walletOf.get(rec.signer);
    if (!wallet) return;
    const fees = await this.fees.current();
    const raw = await wallet.signTransaction({ chainId, nonce: rec.nonce, to: rec.signer, data: "0x", value: 0n, gasLimit: 21_000n, ...fees });
    const filler: SubmissionRecord = { ...rec, queueId: randomUUID(), hash: keccak256(raw), raw, kind: "refill", status: "pending", createdAt: new Date() };
    delete filler.idempotencyKey;
    delete filler.errorMessage;
    await this.options.store.insert(filler);
    await this.broadcast(filler, lane).catch(() => undefined);
  }

  private async fundIfDev(address: string): Promise<void> {
    if (!this.options.devFunding || this.funded.has(address)) return;
    const balance = BigInt((await this.options.pool.call("eth_getBalance", [address, "latest"])) as string);
    if (balance < DEV_BALANCE / 2n) await this.options.pool.call("anvil_setBalance", [address, toQuantity(DEV_BALANCE)]);
    this.funded.add(address);
  }
}

function toQuantity(n: bigint): JsonValue {
  return "0x" + n.toString(16);
}
