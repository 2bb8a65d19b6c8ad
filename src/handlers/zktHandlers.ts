// ZktService handlers: messages to ZktCore calls and back, for every transport (Connect, gRPC, gRPC-Web
// directly; ZKT REST in process). Policy, idempotency included, is applied around them (guard.ts).
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, type ListValue } from "@bufbuild/protobuf/wkt";
import {
  type ZktService,
  TransactionStatus,
  DeployContractResponseSchema,
  WriteContractResponseSchema,
  WriteMessageResponseSchema,
  type Receipt as ReceiptMsg,
} from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { GatewayError, type JsonValue } from "../errors.js";
import type { Receipt, WriteHooks, ZktCore } from "../zkt/zktCore.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ReceiptSchema } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";
import { accessKey, callerKey, claimHooksKey } from "./context.js";
import type { SubscriptionHub } from "../live/subscriptions.js";
import { subscriptionStream } from "../live/subscriptionStream.js";
import type { GetTransactionStatusResponseSchema } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";

/** WatchTransaction looks at least this often, blocks or not. */
const WATCH_MS = 1_000;

const list = (l: ListValue | undefined): JsonValue[] => (l ? (toJson(ListValueSchema, l) as JsonValue[]) : []);
const toList = (v: JsonValue[]): ListValue => fromJson(ListValueSchema, v);
const access = (ctx: HandlerContext) => ctx.values.get(accessKey);
/** Who a per-caller bound counts against: the key, else the client's IP. */
const callerId = (ctx: HandlerContext): string => {
  const a = ctx.values.get(accessKey);
  return a.kind === "key" ? `key:${a.keyId}` : `ip:${ctx.values.get(callerKey).clientIp}`;
};

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

/** A write's own callback URL, when it gave one. */
const callback = (url: string): { callbackUrl?: string } => (url ? { callbackUrl: url } : {});

/** The write hooks of the idempotency claim the guard runs this call under, if any. */
function hooksOf(ctx: HandlerContext): WriteHooks {
  const h = ctx.values.get(claimHooksKey);
  return { ...(h.journaled ? { journaled: h.journaled } : {}), ...(h.journalKey ? { idempotencyKey: h.journalKey } : {}) };
}

export function zktHandlers(core: ZktCore, hub: SubscriptionHub): ServiceImpl<typeof ZktService> {
  const statusOf = async (queueId: string): Promise<MessageInitShape<typeof GetTransactionStatusResponseSchema>> => {
    const r = await core.transactionStatus(queueId);
    return {
      queueId: r.queueId,
      status: statusEnum[r.status],
      transactionHash: r.hash,
      errorMessage: r.errorMessage ?? "",
      createdAt: r.createdAt.toISOString(),
      processedAt: r.processedAt?.toISOString() ?? "",
      statusReason: r.statusReason ?? "",
    };
  };
  return {
    async writeMessage(req, ctx) {
      const r = await core.writeMessage(access(ctx), messageOf(req), { ...hooksOf(ctx), ...callback(req.callbackUrl), wait: req.wait });
      return create(WriteMessageResponseSchema, { hash: r.hash, queueId: r.queueId, ...(r.receipt ? { receipt: receiptMsg(r.receipt) as ReceiptMsg } : {}) });
    },
    async readContract(req, ctx) {
      const r = await core.callContract(
        access(ctx),
        { to: req.to, abi: list(req.abi), method: req.method, arguments: list(req.arguments) },
        { forceRead: true },
      );
      return { output: toList(r.kind === "read" ? r.output : []) };
    },
    async writeContract(req, ctx) {
      const r = await core.callContract(
        access(ctx),
        { to: req.to, abi: list(req.abi), method: req.method, arguments: list(req.arguments) },
        { ...hooksOf(ctx), ...callback(req.callbackUrl), forceWrite: true, wait: req.wait },
      );
      if (r.kind !== "write") return create(WriteContractResponseSchema);
      return create(WriteContractResponseSchema, { hash: r.hash, queueId: r.queueId, ...(r.receipt ? { receipt: receiptMsg(r.receipt) as ReceiptMsg } : {}) });
    },
    async deployContract(req, ctx) {
      const r = await core.deployContract(access(ctx), req.code, list(req.arguments), {
        ...hooksOf(ctx),
        ...callback(req.callbackUrl),
        ...(req.contractName ? { contractName: req.contractName } : {}),
        wait: req.wait ?? true,
        caller: callerId(ctx),
      });
      return create(DeployContractResponseSchema, { contractAddress: r.contractAddress, abi: toList(r.abi), hash: r.hash, queueId: r.queueId });
    },
    getTransactionStatus: (req) => statusOf(req.queueId),
    async *watchTransaction(req, ctx) {
      // Checked at each new block of the network's one feed (a status changes when a block is mined), and
      // at least every WATCH_MS (a broadcast changes it between blocks).
      let last = "";
      const blocks = subscriptionStream(hub, "newHeads", {}, ctx.signal, 16)[Symbol.asyncIterator]();
      try {
        for (;;) {
          const status = await statusOf(req.queueId);
          const key = `${status.status}/${status.transactionHash}`;
          if (key !== last) {
            last = key;
            yield { status };
          }
          if (status.status === TransactionStatus.COMPLETED || status.status === TransactionStatus.ERROR || ctx.signal.aborted) return;
          await Promise.race([blocks.next(), new Promise((r) => setTimeout(r, WATCH_MS))]);
        }
      } finally {
        await blocks.return?.(undefined);
      }
    },
  };
}

/** The message of a write: `arguments` (REST's name), or `message`, its alias; two different ones are refused. */
function messageOf(req: { arguments: string; message: string }): string {
  if (req.arguments !== "" && req.message !== "" && req.arguments !== req.message)
    throw new GatewayError("validation", "arguments and message are one field under two names: send one of them (arguments, as REST does)");
  return req.arguments !== "" ? req.arguments : req.message;
}
