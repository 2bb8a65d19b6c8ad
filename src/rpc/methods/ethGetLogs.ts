// eth_getLogs, bounded before a node is asked (boundedLogs.ts: the block range and the results a query may
// have, read at each call so a reloaded configuration's caps apply to the next one).
import type { CustomMethod, RpcCore } from "../rpcCore.js";
import { boundedGetLogs, type LogBounds, type LogsNode } from "../boundedLogs.js";

/** Registers eth_getLogs; returns it, for the gateway's log filters to read logs the same way. */
export function registerGetLogs(core: RpcCore, node: LogsNode, bounds: LogBounds): CustomMethod {
  const getLogs = boundedGetLogs(node, bounds);
  core.register("eth_getLogs", getLogs);
  return getLogs;
}
