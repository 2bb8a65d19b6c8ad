// RpcService handlers: messages to RpcCore calls and back, for every transport (Connect, gRPC, gRPC-Web
// directly; the REST adapters in process). Policy is applied around them (guard.ts); they decide nothing.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema, type ListValue } from "@bufbuild/protobuf/wkt";
import { RpcService, BatchItemSchema, type CallRequest } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { GatewayError, type JsonValue } from "../errors.js";
import type { CallContext, CoreCall, RpcCore } from "../rpc/rpcCore.js";
import { requireAddress, requireBlockTag, requireData } from "../rpc/hex.js";
import { toRpcError } from "./rpcError.js";
import { accessKey } from "./context.js";
import type { Sponsorship } from "../platform/sponsorship.js";
import { parseLogFilter, type SubscriptionHub } from "../live/subscriptions.js";
import { subscriptionStream } from "../live/subscriptionStream.js";

/** Notifications a stream may hold for a reader that does not keep up, before it is ended. */
const MAX_QUEUED = 1_024;

const hexNumber = (v: unknown): bigint => (typeof v === "string" && /^0x[0-9a-fA-F]+$/.test(v) ? BigInt(v) : 0n);

function callContext(ctx: HandlerContext): CallContext {
  return { access: ctx.values.get(accessKey) };
}

function paramsOf(list: ListValue | undefined): JsonValue[] {
  return list ? (toJson(ListValueSchema, list) as JsonValue[]) : [];
}

function toCoreCall(req: CallRequest): CoreCall {
  return { method: req.method, params: paramsOf(req.params) };
}

async function callString(core: RpcCore, ctx: HandlerContext, method: string, params: JsonValue[]): Promise<string> {
  const result = await core.call(callContext(ctx), method, params);
  if (typeof result !== "string") throw new GatewayError("internal", `upstream answered ${method} with a non-string result`);
  return result;
}

async function platformList(core: RpcCore, ctx: HandlerContext, method: string, blockHash: string): Promise<{ code: number; value: string[] }> {
  const result = (await core.call(callContext(ctx), method, blockHash ? [blockHash] : [])) as { code: number; value: string[] };
  return { code: result.code, value: result.value };
}

export function rpcHandlers(core: RpcCore, maxBatchSize: number, sponsorship: Sponsorship, hub: SubscriptionHub): ServiceImpl<typeof RpcService> {
  return {
    async *subscribeNewHeads(_req, ctx) {
      for await (const text of subscriptionStream(hub, "newHeads", {}, ctx.signal, MAX_QUEUED)) {
        const header = JSON.parse(text) as Record<string, JsonValue>;
        yield {
          number: hexNumber(header.number),
          hash: String(header.hash ?? ""),
          parentHash: String(header.parentHash ?? ""),
          timestamp: hexNumber(header.timestamp),
          header,
        };
      }
    },
    async *subscribeLogs(req, ctx) {
      const filter = parseLogFilter({
        ...(req.addresses.length > 0 ? { address: req.addresses } : {}),
        ...(req.topics.length > 0 ? { topics: req.topics.map((t) => (t.anyOf.length > 0 ? t.anyOf : null)) } : {}),
      });
      for await (const text of subscriptionStream(hub, "logs", filter, ctx.signal, MAX_QUEUED)) {
        const log = JSON.parse(text) as Record<string, JsonValue>;
        yield {
          address: String(log.address ?? ""),
          topics: (log.topics as string[] | undefined) ?? [],
          data: String(log.data ?? "0x"),
          blockNumber: hexNumber(log.blockNumber),
          blockHash: String(log.blockHash ?? ""),
          transactionHash: String(log.transactionHash ?? ""),
          logIndex: Number(hexNumber(log.logIndex)),
          removed: log.removed === true,
        };
      }
    },
    async call(req, ctx) {
      const result = await core.call(callContext(ctx), req.method, paramsOf(req.params));
      return { result: fromJson(ValueSchema, result) };
    },
    async batch(req, ctx) {
      if (req.calls.length === 0) throw new GatewayError("invalid_request", "Invalid Request: empty batch");
      if (req.calls.length > maxBatchSize) {
        throw new GatewayError("invalid_request", `Invalid Request: a batch may hold at most ${maxBatchSize} requests, this one has ${req.calls.length}`);
      }
      const outcomes = await core.callMany(callContext(ctx), req.calls.map(toCoreCall));
      return {
        items: outcomes.map((o) =>
          o.ok ? create(BatchItemSchema, { result: fromJson(ValueSchema, o.result) }) : create(BatchItemSchema, { error: toRpcError(o.error) }),
        ),
      };
    },
    async getChainId() {
      return { chainId: "0x" + core.chainId.toString(16), chainIdDecimal: BigInt(core.chainId) };
    },
    async getBlockNumber(_req, ctx) {
      return { blockNumber: await callString(core, ctx, "eth_blockNumber", []) };
    },
    async getBalance(req, ctx) {
      const params = [requireAddress("address", req.address), requireBlockTag("block", req.block)];
      return { balance: await callString(core, ctx, "eth_getBalance", params) };
    },
    async sendRawTransaction(req, ctx) {
      const raw = requireData("raw_transaction", req.rawTransaction);
      return { transactionHash: await callString(core, ctx, "eth_sendRawTransaction", [raw]) };
    },
    getValidatorList: (req, ctx) => platformList(core, ctx, "platform_getValidatorList", req.blockHash),
    getActiveValidatorList: (req, ctx) => platformList(core, ctx, "platform_getActiveValidatorList", req.blockHash),
    getSupportedTokens: (req, ctx) => platformList(core, ctx, "platform_getSupportedTokens", req.blockHash),
    async signSponsorConsent(req, ctx) {
      return sponsorship.signConsent(callContext(ctx).access, req.rawTransaction);
    },
    async sendSponsoredTransaction(req, ctx) {
      return {
        transactionHash: await callString(core, ctx, "platform_sendSponsoredTransaction", [req.rawTransaction, req.sponsorAddress, req.sponsorSignature]),
      };
    },
  };
}
