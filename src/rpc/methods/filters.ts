// The filter methods as JSON-RPC calls them (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter,
// eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter), answered from the gateway's own filters
// (live/gatewayFilters.ts) rather than a node's: params checked here, the filters' rules there.
import { GatewayError, type JsonValue } from "../../errors.js";
import type { GatewayFilters } from "../../live/gatewayFilters.js";
import { boundedFilter, type LogBounds, type LogsNode } from "../boundedLogs.js";
import type { CallContext, RpcCore } from "../rpcCore.js";

/** Who holds a filter, for the per-caller limit: the key, else the client's address. */
const ownerOf = (ctx: CallContext): string => (ctx.access.kind === "key" ? `key:${ctx.access.keyId}` : `ip:${ctx.clientIp ?? "unknown"}`);

function filterId(params: JsonValue[], method: string): string {
  const id = params[0];
  if (params.length !== 1 || typeof id !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(id))
    throw new GatewayError("invalid_params", `Invalid params: ${method} takes one filter id (0x hex)`);
  return id;
}

function noParams(params: JsonValue[], method: string): void {
  if (params.length > 0) throw new GatewayError("invalid_params", `Invalid params: ${method} takes no params`);
}

export function registerFilterMethods(core: RpcCore, filters: GatewayFilters, logsNode: LogsNode, bounds: LogBounds): void {
  core.register("eth_newFilter", async (ctx, params) => filters.newLogFilter(ownerOf(ctx), await boundedFilter(logsNode, bounds, params, ctx.signal)));
  core.register("eth_newBlockFilter", async (ctx, params) => {
    noParams(params, "eth_newBlockFilter");
    return filters.newBlockFilter(ownerOf(ctx));
  });
  core.register("eth_newPendingTransactionFilter", async (ctx, params) => {
    noParams(params, "eth_newPendingTransactionFilter");
    // As the newPendingTransactions subscription: the pool's traffic is a keyed caller's to watch.
    if (ctx.access.kind !== "key") throw new GatewayError("key_required", "eth_newPendingTransactionFilter needs an API key: call it on /zgt/<API_KEY>");
    return filters.newPendingTransactionFilter(ownerOf(ctx));
  });
  core.register("eth_getFilterChanges", async (_ctx, params) => filters.changes(filterId(params, "eth_getFilterChanges")));
  core.register("eth_getFilterLogs", async (ctx, params) => filters.logs(filterId(params, "eth_getFilterLogs"), ctx.signal));
  core.register("eth_uninstallFilter", async (_ctx, params) => filters.uninstall(filterId(params, "eth_uninstallFilter")));
}
