// RpcService handlers: messages to RpcCore calls and back, for every transport (Connect, gRPC, gRPC-Web
// directly; the REST adapters in process). Policy is applied around them (guard.ts); they decide nothing.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema, type ListValue, type Value } from "@bufbuild/protobuf/wkt";
import { type RpcService, BatchItemSchema, type BatchItem, type CallRequest, type RpcError } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { GatewayError, failsWholeRequest, type JsonValue } from "../errors.js";
import type { RpcOutcome } from "../chain/upstreamReplies.js";
import type { CallContext, CoreCall, Params, RpcCore } from "../rpc/rpcCore.js";
import { requireBatchSize } from "../rpc/batchSize.js";
import { andThen } from "../maybePromise.js";
import { requireAddress, requireBlockTag, requireData } from "../rpc/hex.js";
import { toRpcError } from "./rpcError.js";
import { accessKey, callerKey, PARSED_PARAMS, transportOf, type CallRequestWithParsedParams } from "./context.js";
import type { Sponsorship } from "../platform/sponsorship.js";
import { TEST_FUNDS_WEI, type TestFaucet } from "../platform/testFaucet.js";
import type { SubscriptionHub } from "../live/subscriptions.js";
import { parseLogFilter } from "../live/parseLogFilter.js";
import { subscriptionStream } from "../live/subscriptionStream.js";
import type { Access } from "../keys/access.js";
import type { KeyUsage } from "../limits/rateLimits.js";

/** Notifications a stream may hold for a reader that does not keep up, before it is ended. */
const MAX_QUEUED = 1_024;

const hexNumber = (v: unknown): bigint => (typeof v === "string" && /^0x[0-9a-fA-F]+$/.test(v) ? BigInt(v) : 0n);

function callContext(ctx: HandlerContext): CallContext {
  return { access: ctx.values.get(accessKey), signal: ctx.signal, clientIp: ctx.values.get(callerKey).clientIp, transport: transportOf(ctx) };
}

function paramsOf(list: ListValue | undefined): JsonValue[] {
  return list ? (toJson(ListValueSchema, list) as JsonValue[]) : [];
}

/** A call's params: as an in-process caller parsed them, else its JSON text when given (params_json), else the ListValue. */
function paramsOfCall(req: CallRequest): Params {
  const parsed = (req as CallRequestWithParsedParams)[PARSED_PARAMS];
  if (parsed !== undefined) return parsed;
  if (req.paramsJson === "") return paramsOf(req.params);
  if (req.paramsJson === "[]") return [];
  try {
    return JSON.parse(req.paramsJson) as Params;
  } catch {
    throw new GatewayError("invalid_params", "Invalid params: params_json is not valid JSON");
  }
}

function toCoreCall(req: CallRequest): CoreCall {
  return { method: req.method, params: paramsOfCall(req) };
}

/** A result as the request asked for it: the node's JSON text when it gave params_json, else a Value. */
function resultOf(req: CallRequest, outcome: RpcOutcome & { ok: true }): { resultJson: string } | { result: Value } {
  return (req as CallRequestWithParsedParams)[PARSED_PARAMS] !== undefined || req.paramsJson !== ""
    ? { resultJson: outcome.raw ?? JSON.stringify(outcome.result) }
    : { result: fromJson(ValueSchema, outcome.result) };
}

/** A BatchItem as the plain object protobuf-es messages are, without create()'s per-item cost. */
function batchItem(fields: { resultJson: string } | { result: Value } | { error: RpcError }): BatchItem {
  return { $typeName: BatchItemSchema.typeName, result: undefined, error: undefined, resultJson: "", ...fields };
}

/**
 * One failure shared by every call of a batch that refuses the request as a whole (the node unreachable):
 * answered once for the batch, not per item, on every transport.
 */
function sharedFailure(outcomes: RpcOutcome[]): GatewayError | undefined {
  const first = outcomes[0];
  if (!first || first.ok || !failsWholeRequest(first.error)) return undefined;
  return outcomes.every((o) => !o.ok && o.error === first.error) ? first.error : undefined;
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

export function rpcHandlers(
  core: RpcCore,
  maxBatchSize: number,
  sponsorship: Sponsorship,
  hub: SubscriptionHub,
  /** Present on an embedded dev chain only. */
  faucet?: TestFaucet,
  /** A key's use, limits and resets (the rate limits' count). */
  usageOf?: (access: Extract<Access, { kind: "key" }>) => KeyUsage,
): ServiceImpl<typeof RpcService> {
  return {
    getUsage(_req, ctx) {
      const { access } = callContext(ctx);
      if (access.kind !== "key" || !usageOf) throw new GatewayError("unauthorized", "usage is a key's: call with an API key");
      const u = usageOf(access);
      const n = (v: number) => BigInt(Math.round(v));
      return {
        requests: { minute: n(u.requests.minute), day: n(u.requests.day), month: n(u.requests.month) },
        writes: { day: n(u.writes.day), month: n(u.writes.month) },
        limits: u.limits,
        resets: u.resets,
        hourly: u.hourly.map((h) => ({ hour: new Date(h.hour).toISOString(), requests: n(h.requests), writes: n(h.writes) })),
      };
    },
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
    // At once when the core answers at once (a local answer, the cache).
    call(req, ctx) {
      return andThen(core.callMany(callContext(ctx), [toCoreCall(req)]), (outcomes) => {
        const outcome = outcomes[0];
        if (!outcome) throw new GatewayError("internal", "no outcome");
        if (!outcome.ok) throw outcome.error;
        return resultOf(req, outcome);
      });
    },
    async batch(req, ctx) {
      requireBatchSize(req.calls.length, maxBatchSize);
      const outcomes = await core.callMany(callContext(ctx), req.calls.map(toCoreCall));
      const shared = sharedFailure(outcomes);
      if (shared) throw shared;
      return {
        items: outcomes.map((o, i) => batchItem(o.ok ? resultOf(req.calls[i]!, o) : { error: toRpcError(o.error) })),
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
    async requestTestFunds(req) {
      const address = requireAddress("address", req.address);
      if (!faucet) throw new GatewayError("not_found", "test funds exist on the gateway's embedded dev chain only; this network runs on real nodes");
      const balance = await faucet.fund(address);
      return { address, amountWei: TEST_FUNDS_WEI.toString(), balanceWei: balance.toString() };
    },
    async sendSponsoredTransaction(req, ctx) {
      return {
        transactionHash: await callString(core, ctx, "platform_sendSponsoredTransaction", [req.rawTransaction, req.sponsorAddress, req.sponsorSignature]),
      };
    },
  };
}
