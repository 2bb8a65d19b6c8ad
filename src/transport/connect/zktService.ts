// ZktService over Connect/gRPC/gRPC-Web: the same ZktCore the REST paths call.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create, fromJson, fromJsonString, toJson, toJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { ListValueSchema, type ListValue } from "@bufbuild/protobuf/wkt";
import {
  ZktService,
  TransactionStatus,
  DeployContractResponseSchema,
  WriteContractResponseSchema,
  WriteMessageResponseSchema,
  type Receipt as ReceiptMsg,
} from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { GatewayError } from "../../errors.js";
import { MAX_IDEMPOTENCY_KEY_LENGTH, type IdempotencyStore } from "../../store/idempotencyStore.js";
import type { JsonValue } from "../../errors.js";
import type { Receipt, WriteHooks, ZktCore } from "../../zkt/zktCore.js";
import type { Access } from "../../rpc/methodPolicy.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ReceiptSchema } from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { accessKey, clientIpKey } from "./context.js";

const list = (l: ListValue | undefined): JsonValue[] => (l ? (toJson(ListValueSchema, l) as JsonValue[]) : []);
const toList = (v: JsonValue[]): ListValue => fromJson(ListValueSchema, v);
const access = (ctx: HandlerContext) => ctx.values.get(accessKey);

const statusEnum = {
  pending: TransactionStatus.PENDING,
  processing: TransactionStatus.PROCESSING,
  completed: TransactionStatus.COMPLETED,
  error: TransactionStatus.ERROR,
} as const;

function receiptMsg(r: Receipt): MessageInitShape<typeof ReceiptSchema> {
  return {
    status: r.status,
    blockNumber: BigInt(r.blockNumber),
    blockHash: r.blockHash,
    gasUsed: r.gasUsed,
    contractAddress: r.contractAddress ?? "",
    logs: r.logs.map((l) => ({
      address: l.address,
      event: l.event ?? "",
      ...(l.args ? { args: l.args } : {}),
      topics: l.topics,
      data: l.data,
      logIndex: l.logIndex,
    })),
  };
}

export interface ZktServiceOptions {
  idempotency: IdempotencyStore;
  /** Names this network in idempotency scopes. */
  network: string;
  /** Charges one transaction to the caller's daily quota (throws when spent). */
  chargeTransaction(access: Access): Promise<void>;
}

export function zktServiceImpl(core: ZktCore, options: ZktServiceOptions): ServiceImpl<typeof ZktService> {
  /**
   * A write, charged to the caller's daily quota. Its idempotency_key works as the REST paths' Idempotency-Key
   * header: a retry returns the first answer, sends nothing new and is not charged. Scoped per caller, network
   * and method (an answer replays only as its own type). An error raised once the write was journaled (a
   * receipt wait that timed out, a revert) is kept too, and replays as the same error.
   */
  const once = async <S extends DescMessage>(schema: S, req: { idempotencyKey: string }, ctx: HandlerContext, write: (hooks: WriteHooks) => Promise<MessageShape<S>>): Promise<MessageShape<S>> => {
    const run = async (hooks: WriteHooks): Promise<MessageShape<S>> => {
      await options.chargeTransaction(access(ctx));
      return write(hooks);
    };
    const key = req.idempotencyKey;
    if (key === "") return run({});
    if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw new GatewayError("validation", `idempotency_key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
    const who = access(ctx);
    const scope = `zkt-connect:${options.network}:${ctx.method.name}:${who.kind === "key" ? who.keyId : `public:${ctx.values.get(clientIpKey)}`}`;
    const kept = (err: GatewayError) => ({ status: err.httpStatus, body: JSON.stringify({ kind: err.kind, message: err.message, details: err.details ?? null }) });
    const stored = await options.idempotency.once(
      scope,
      key,
      // The request as sent, but for the key itself: the same key with another payload is refused (422).
      JSON.stringify({ ...req, idempotencyKey: undefined }, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)),
      async ({ journaled, journalKey }) => ({ status: 200, body: toJsonString(schema, await run({ journaled, idempotencyKey: journalKey })) }),
      kept,
    );
    if (stored.status !== 200) {
      const error = JSON.parse(stored.body) as { kind: GatewayError["kind"]; message: string; details: JsonValue };
      throw new GatewayError(error.kind, error.message, error.details === null ? {} : { details: error.details });
    }
    return fromJsonString(schema, stored.body);
  };
  return {
    async writeMessage(req, ctx) {
      return once(WriteMessageResponseSchema, req, ctx, async (hooks) => create(WriteMessageResponseSchema, await core.writeMessage(access(ctx), req.message, hooks)));
    },
    async readContract(req, ctx) {
      const r = await core.callContract(access(ctx), { to: req.to, abi: list(req.abi), method: req.method, arguments: list(req.arguments) }, { forceRead: true });
      return { output: toList(r.kind === "read" ? r.output : []) };
    },
    async writeContract(req, ctx) {
      return once(WriteContractResponseSchema, req, ctx, async (hooks) => {
        const r = await core.callContract(access(ctx), { to: req.to, abi: list(req.abi), method: req.method, arguments: list(req.arguments) }, { ...hooks, forceWrite: true, wait: req.wait });
        if (r.kind !== "write") return create(WriteContractResponseSchema);
        return create(WriteContractResponseSchema, { hash: r.hash, queueId: r.queueId, ...(r.receipt ? { receipt: receiptMsg(r.receipt) as ReceiptMsg } : {}) });
      });
    },
    async deployContract(req, ctx) {
      return once(DeployContractResponseSchema, req, ctx, async (hooks) => {
        const r = await core.deployContract(access(ctx), req.code, list(req.arguments), { ...hooks, ...(req.contractName ? { contractName: req.contractName } : {}), wait: req.wait ?? true });
        return create(DeployContractResponseSchema, { contractAddress: r.contractAddress, abi: toList(r.abi), hash: r.hash, queueId: r.queueId });
      });
    },
    async getTransactionStatus(req) {
      const r = await core.transactionStatus(req.queueId);
      return {
        queueId: r.queueId,
        status: statusEnum[r.status],
        transactionHash: r.hash,
        errorMessage: r.errorMessage ?? "",
        createdAt: r.createdAt.toISOString(),
        processedAt: r.processedAt?.toISOString() ?? "",
      };
    },
  };
}
