// The ZKT operations of one network, shared by the REST adapter and the Connect service: write a message,
// read or write a contract function, deploy from Solidity source, and report a submission's status.
import { getCreateAddress, hexlify, toUtf8Bytes, Interface } from "ethers";
import { GatewayError, type JsonValue } from "../errors.js";
import type { NetworkConfig } from "../config/config.js";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { Access } from "../keys/access.js";
import type { Wallets } from "../keys/custody/wallets.js";
import { redactPath } from "../log/logger.js";
import { PUBLIC_SIGNER_INDEX } from "../keys/custody/wallets.js";
import type { Sequencer } from "../sequencer/sequencer.js";
import type { TxSigner } from "../sequencer/txSigner.js";
import type { RpcReceipt } from "../sequencer/chainFollower.js";
import { requireAllowedTarget } from "../keys/allowedTargets.js";
import { reopenedReason, type SubmissionRecord, type SubmissionStore } from "../store/submissionStore.js";
import { isReadOnly, parseAbi, selectFunction } from "./contractAbi.js";
import { convertArguments } from "./convertArguments.js";
import { formatOutputs } from "../abi/formatValues.js";
import { type DecodedLog, decodeLogs } from "../abi/decodeLogs.js";
import { revertError } from "./decodeRevert.js";
import type { SolidityCompiler } from "./solc/compileSolidity.js";

export interface ContractCall {
  to: string;
  abi: JsonValue;
  method: string;
  arguments: JsonValue[];
}

export interface Receipt {
  status: "success" | "reverted";
  blockNumber: number;
  blockHash: string;
  gasUsed: string;
  contractAddress: string | null;
  logs: DecodedLog[];
}

export type CallResult = { kind: "read"; output: JsonValue[] } | { kind: "write"; hash: string; queueId: string; receipt?: Receipt };

export interface Submitted {
  hash: string;
  queueId: string;
}

export interface ZktCoreDeps {
  network: NetworkConfig;
  /** The sequencer's journal key for this network's chain. */
  journalNetwork: string;
  pool: UpstreamPool;
  sequencer: Sequencer;
  store: SubmissionStore;
  wallets: Wallets;
  compiler: SolidityCompiler;
  waitTimeoutMs?: number;
  /** Per-write callbacks (callbackUrl); absent, a write that asks for one is refused. */
  callbacks?: WriteCallbacks;
}

/** Told what a write has done so far: an Idempotency-Key must keep any answer given once it is journaled. */
export interface WriteHooks {
  /** Called once the transaction is signed and journaled (it will be sent, whatever happens next). */
  journaled?: () => void;
  /** Recorded with the journaled write (an Idempotency-Key claim's, so a claim left by a stopped process is settled). */
  idempotencyKey?: string;
  /** Where the write's outcome is POSTed (a keyed write only). */
  callbackUrl?: string;
}

/** Per-write callbacks (webhooks/writeCallbacks.ts): a URL checked before the write, attached once it is journaled. */
export interface WriteCallbacks {
  check(access: Access, url: string): Promise<void>;
  attach(access: Extract<Access, { kind: "key" }>, queueId: string, url: string): Promise<void>;
  /** Keeps the write's contract events, when its outcome is sent somewhere (decoded there). */
  rememberAbi(access: Access, queueId: string, callbackUrl: string | undefined, events: () => string): Promise<void>;
}

/** Decodes no logs: a message runs no code. */
const NO_ABI = new Interface([]);

export class ZktCore {
  constructor(private readonly deps: ZktCoreDeps) {}

  /** The wallet that signs for this caller: the shared try-it-out signer, or the key's own. */
  signerFor(access: Access): TxSigner {
    return this.deps.wallets.signer(access.kind === "key" ? access.walletIndex : PUBLIC_SIGNER_INDEX);
  }

  /** Writes a message; with `wait`, answers once it is mined, with its receipt. */
  async writeMessage(access: Access, message: string, options: WriteHooks & { wait?: boolean } = {}): Promise<Submitted & { receipt?: Receipt }> {
    if (message.length === 0) throw new GatewayError("validation", "arguments must be a non-empty string (the message to write)");
    const rec = await this.submit(
      access,
      { to: this.deps.network.messageRecipient, data: hexlify(toUtf8Bytes(message)), kind: "message" },
      undefined,
      "the message",
      options,
    );
    if (!options.wait) return { hash: rec.hash, queueId: rec.queueId };
    return { hash: rec.hash, queueId: rec.queueId, receipt: await this.receiptOf(rec, NO_ABI) };
  }

  /** Reads with eth_call when the function is view/pure, else signs and submits (optionally waiting). */
  async callContract(
    access: Access,
    call: ContractCall,
    options: WriteHooks & { wait?: boolean; forceWrite?: boolean; forceRead?: boolean; beforeWrite?: () => Promise<void> } = {},
  ): Promise<CallResult> {
    const to = requireAddress(call.to);
    const selected = selectFunction(call.abi, call.method, call.arguments.length);
    const { iface, fn } = selected;
    const args = convertArguments(fn.inputs, call.arguments, `${fn.name}`);
    const data = iface.encodeFunctionData(fn, args);
    const read = options.forceRead || (!options.forceWrite && isReadOnly(fn));
    if (read) {
      let result: JsonValue;
      try {
        result = await this.deps.pool.call("eth_call", [{ from: this.signerFor(access).address, to, data }, "latest"]);
      } catch (err) {
        throw err instanceof GatewayError && err.kind === "execution_reverted" ? revertError(err, selected.decoding(), fn.name) : err;
      }
      if (result === "0x" && fn.outputs.length > 0) {
        const code = await this.deps.pool.call("eth_getCode", [to, "latest"]);
        if (code === "0x") throw new GatewayError("validation", `there is no contract at ${to} on this network`);
      }
      try {
        return { kind: "read", output: formatOutputs(fn.outputs, iface.decodeFunctionResult(fn, result as string)) };
      } catch {
        throw new GatewayError("validation", `the result of ${fn.name} could not be decoded with the given abi`, { details: { data: result } });
      }
    }
    await options.beforeWrite?.();
    const rec = await this.submit(access, { to, data, kind: "call" }, selected.decoding, fn.name, options);
    if (!options.wait) return { kind: "write", hash: rec.hash, queueId: rec.queueId };
    const receipt = await this.receiptOf(rec, selected.decoding());
    if (receipt.status === "reverted")
      throw new GatewayError("execution_reverted", `${fn.name} reverted on chain`, { details: { hash: rec.hash, queueId: rec.queueId } });
    return { kind: "write", hash: rec.hash, queueId: rec.queueId, receipt };
  }

  /**
   * Compiles and deploys. With wait (the default) answers once the contract exists, so it can be called right
   * away; without, once the deployment is signed and journaled (the address is fixed by sender and nonce).
   */
  async deployContract(
    access: Access,
    code: string,
    constructorArgs: JsonValue[],
    options: WriteHooks & { contractName?: string; wait?: boolean; caller?: string } = {},
  ): Promise<Submitted & { contractAddress: string; abi: JsonValue[]; receipt?: Receipt }> {
    if (code.trim() === "") throw new GatewayError("validation", "code must be non-empty Solidity source");
    // A key limited to some receivers cannot create contracts: refused before the compile.
    requireAllowedTarget(access, null, "a deploy");
    const compiled = await this.deps.compiler.compile(code, {
      evmVersion: this.deps.network.evmVersion,
      ...(options.contractName ? { contractName: options.contractName } : {}),
      ...(options.caller ? { caller: options.caller } : {}),
    });
    const iface = parseAbi(compiled.abi.length > 0 ? compiled.abi : ["constructor()"]);
    const args = convertArguments(iface.deploy.inputs, constructorArgs, `the constructor of ${compiled.name}`);
    const data = compiled.bytecode + iface.encodeDeploy(args).slice(2);
    const rec = await this.submit(access, { to: null, data, kind: "deploy" }, () => iface, `the constructor of ${compiled.name}`, options);
    const contractAddress = getCreateAddress({ from: rec.signer, nonce: rec.nonce });
    const submitted = { hash: rec.hash, queueId: rec.queueId, contractAddress, abi: compiled.abi };
    if (options.wait === false) return submitted;
    const receipt = await this.receiptOf(rec, iface);
    if (receipt.status === "reverted")
      throw new GatewayError("execution_reverted", `the deployment of ${compiled.name} reverted on chain`, { details: { hash: rec.hash } });
    return { ...submitted, receipt };
  }

  /** A write as its caller sees it: one sent again after the node lost it reads processing, saying why. */
  async transactionStatus(queueId: string): Promise<SubmissionRecord & { statusReason?: string }> {
    const rec = /^[0-9a-f-]{36}$/.test(queueId) ? await this.deps.store.get(queueId) : undefined;
    if (!rec || rec.network !== this.deps.journalNetwork)
      throw new GatewayError("not_found", `no submission with queueId "${redactPath(queueId)}" on this network`);
    const statusReason = reopenedReason(rec);
    if (statusReason === undefined) return rec;
    const { processedAt: _minedBefore, ...unmined } = rec;
    return { ...unmined, status: "processing", statusReason };
  }

  private async submit(
    access: Access,
    tx: { to: string | null; data: string; kind: SubmissionRecord["kind"] },
    /** What decodes a revert's custom error (built only if the write reverts). */
    decoding: (() => Interface) | undefined,
    what: string,
    hooks: WriteHooks,
  ): Promise<SubmissionRecord> {
    requireAllowedTarget(access, tx.to, what);
    // Checked before anything is signed: a refused URL journals nothing.
    if (hooks.callbackUrl !== undefined) {
      if (!this.deps.callbacks) throw new GatewayError("validation", "callbackUrl is not available on this gateway");
      await this.deps.callbacks.check(access, hooks.callbackUrl);
    }
    let rec: SubmissionRecord;
    try {
      rec = await this.deps.sequencer.submit({
        wallet: this.signerFor(access),
        to: tx.to,
        data: tx.data,
        kind: tx.kind,
        ...(hooks.idempotencyKey ? { idempotencyKey: hooks.idempotencyKey } : {}),
      });
    } catch (err) {
      throw err instanceof GatewayError && err.kind === "execution_reverted" ? revertError(err, decoding?.(), what) : err;
    }
    hooks.journaled?.();
    if (hooks.callbackUrl !== undefined && access.kind === "key") await this.deps.callbacks?.attach(access, rec.queueId, hooks.callbackUrl);
    if (decoding) await this.deps.callbacks?.rememberAbi(access, rec.queueId, hooks.callbackUrl, () => eventsOf(decoding()));
    return rec;
  }

  private async receiptOf(rec: SubmissionRecord, iface: Interface): Promise<Receipt> {
    let raw: RpcReceipt;
    try {
      raw = await this.deps.sequencer.waitForReceipt(rec.hash, this.deps.waitTimeoutMs ?? 60_000);
    } catch (err) {
      // Refused by the node for good: said as soon as it is known.
      if (err instanceof GatewayError) throw err;
      throw new GatewayError(
        "upstream_unavailable",
        `the transaction was accepted but not mined in time; follow it with GET /zkt/transactions/${rec.queueId}`,
        { details: { hash: rec.hash, queueId: rec.queueId } },
      );
    }
    return formatReceipt(raw, iface);
  }
}

/** An interface's event entries as ABI JSON (what a webhook event's logs are decoded with). */
function eventsOf(iface: Interface): string {
  return JSON.stringify(iface.fragments.filter((f) => f.type === "event").map((f) => JSON.parse(f.format("json")) as JsonValue));
}

function requireAddress(to: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(to))
    throw new GatewayError("validation", `to must be a contract address (0x followed by 40 hex digits), got ${JSON.stringify(to)}`);
  return to;
}

export function formatReceipt(r: RpcReceipt, iface: Interface): Receipt {
  return {
    status: r.status === "0x1" ? "success" : "reverted",
    blockNumber: Number(BigInt(r.blockNumber)),
    blockHash: r.blockHash,
    gasUsed: BigInt(r.gasUsed).toString(10),
    contractAddress: r.contractAddress ?? null,
    logs: decodeLogs(r.logs, iface),
  };
}
