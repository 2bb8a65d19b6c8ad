// eth_getLogs within bounds: one query from block 0 to latest can hold a real node for minutes, and
// counted as one request it cost a caller nothing. A range wider than LOGS_MAX_BLOCK_RANGE is refused before it
// reaches a node (a toBlock past the head counts up to the head; a blockHash query is one block), and an answer
// of more than LOGS_MAX_RESULTS logs is not passed on: both are -32005 naming the limit, with
// `data: {limit, requested}`. A node that refuses a range the gateway allows (nodes have caps of their own) is
// asked again for each half, and the halves' logs are joined in order (what eRPC does). A log filter
// (eth_newFilter) is held to the same range.
import { GatewayError, type JsonValue } from "../errors.js";
import type { CustomMethod } from "./rpcCore.js";

export interface LogBounds {
  maxBlockRange: number;
  maxResults: number;
}

export interface LogsNode {
  call(method: string, params: JsonValue[], signal?: AbortSignal): Promise<JsonValue>;
  /** The newest block any node reported, when one has (-1 or undefined otherwise). */
  head(): number | undefined;
}

/** How nodes say a range or an answer is too large for them (geth, erigon, nethermind, besu, reth, hosted ones). */
const NODE_REFUSES_RANGE =
  /range|too (?:many|large|wide|big)|more than \d+ (?:results|logs|blocks)|exceeds? (?:the )?(?:max|limit)|limit exceeded|query timeout|returned more than/i;

export function boundedGetLogs(node: LogsNode, bounds: LogBounds): CustomMethod {
  return async (ctx, params) => {
    const filter = filterOf(params, "eth_getLogs");
    const range = await rangeWithin(node, bounds, filter, ctx.signal, "eth_getLogs");
    const logs = await logsOf(node, filter, range, ctx.signal);
    if (Array.isArray(logs) && logs.length > bounds.maxResults)
      // -32602, as hosted providers answer: clients take it as "narrow the query", not a rate limit to retry
      // (-32005 had cast retry for 13 s and viem for 1.4 s, each retry counted).
      throw new GatewayError(
        "invalid_params",
        `eth_getLogs matched ${logs.length} logs, more than this gateway's limit of ${bounds.maxResults} a query (LOGS_MAX_RESULTS); narrow the range or the filter`,
        { details: { limit: bounds.maxResults, requested: logs.length } },
      );
    return logs;
  };
}

/**
 * A log filter (eth_newFilter) within the same block range, checked when it is made: a filter from block 0 makes
 * its eth_getFilterLogs the whole-chain scan that eth_getLogs is refused. Returns the filter object.
 */
export async function boundedFilter(node: LogsNode, bounds: LogBounds, params: JsonValue[], signal?: AbortSignal): Promise<{ [key: string]: JsonValue }> {
  const filter = filterOf(params, "eth_newFilter");
  await rangeWithin(node, bounds, filter, signal, "a log filter");
  return filter;
}

function filterOf(params: JsonValue[], method: string): { [key: string]: JsonValue } {
  const filter = params[0];
  if (params.length !== 1 || filter === null || typeof filter !== "object" || Array.isArray(filter))
    throw new GatewayError("invalid_params", `Invalid params: ${method} takes one filter object`);
  return filter;
}

/** The filter's block range when the gateway can read it (undefined otherwise); refused past the limit. */
async function rangeWithin(
  node: LogsNode,
  bounds: LogBounds,
  filter: { [key: string]: JsonValue },
  signal: AbortSignal | undefined,
  what: string,
): Promise<{ from: number; to: number } | undefined> {
  if (filter.blockHash !== undefined) return undefined;
  const head = await headOf(node, filter, signal);
  const from = blockOf(filter.fromBlock ?? "latest", head);
  const to = blockOf(filter.toBlock ?? "latest", head);
  // What the node will not read is not counted (a toBlock past the head), and a number the gateway cannot
  // read is the node's to refuse.
  if (from === undefined || to === undefined) return undefined;
  const upTo = head === undefined ? to : Math.min(to, head);
  const width = upTo - from + 1;
  if (width > bounds.maxBlockRange)
    throw new GatewayError(
      "invalid_params",
      `${what} over ${width} blocks exceeds this gateway's limit of ${bounds.maxBlockRange} blocks a query (LOGS_MAX_BLOCK_RANGE); ask for smaller ranges`,
      { details: { limit: bounds.maxBlockRange, requested: width } },
    );
  return width > 0 ? { from, to: upTo } : undefined;
}

/** The node's answer for the filter; where the node refuses the range, each half's, joined in block order. */
async function logsOf(
  node: LogsNode,
  filter: { [key: string]: JsonValue },
  range: { from: number; to: number } | undefined,
  signal: AbortSignal | undefined,
): Promise<JsonValue> {
  try {
    return await node.call("eth_getLogs", [filter], signal);
  } catch (err) {
    if (range === undefined || range.to <= range.from || !(err instanceof GatewayError) || !refusesRange(err)) throw err;
    const mid = range.from + Math.floor((range.to - range.from) / 2);
    const halves = [
      { from: range.from, to: mid },
      { from: mid + 1, to: range.to },
    ];
    const parts = [];
    // One half after the other: the node that refused a range is not handed both halves at once.
    for (const h of halves) parts.push(await logsOf(node, { ...filter, fromBlock: hex(h.from), toBlock: hex(h.to) }, h, signal));
    return parts.flatMap((p) => (Array.isArray(p) ? p : []));
  }
}

function refusesRange(err: GatewayError): boolean {
  // A node's own refusal of the call (not an outage, not our own limit).
  return err.kind !== "upstream_unavailable" && err.kind !== "limit_exceeded" && (err.jsonRpcCode === -32005 || NODE_REFUSES_RANGE.test(err.message));
}

/** The head, asked of a node only when the filter names a block by tag and no node has reported one yet. */
async function headOf(node: LogsNode, filter: { [key: string]: JsonValue }, signal: AbortSignal | undefined): Promise<number | undefined> {
  const known = node.head();
  if (known !== undefined && known >= 0) return known;
  const tagged = [filter.fromBlock ?? "latest", filter.toBlock ?? "latest"].some((b) => typeof b === "string" && !b.startsWith("0x"));
  if (!tagged) return undefined;
  const answer = await node.call("eth_blockNumber", [], signal);
  return typeof answer === "string" ? Number.parseInt(answer, 16) : undefined;
}

/** A filter's block as a number: a quantity, or a tag read against the head; undefined if unreadable. */
function blockOf(block: JsonValue, head: number | undefined): number | undefined {
  if (typeof block !== "string") return undefined;
  if (/^0x[0-9a-fA-F]{1,16}$/.test(block)) return Number.parseInt(block, 16);
  if (block === "earliest") return 0;
  if (block === "latest" || block === "pending" || block === "safe" || block === "finalized") return head;
  return undefined;
}

const hex = (n: number): string => `0x${n.toString(16)}`;
