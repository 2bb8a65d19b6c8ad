// Answers a node gave that cannot be right, judged against what the pool knows rather than that node's word
// (eRPC's integrity checks): a `latest`/`safe`/`finalized` block older than one already seen, logs outside the
// range or block asked for, and an empty log query or null receipt that a node behind the rest may simply not
// have yet. The pool asks another node instead (upstreamPool.ts); only with several nodes, so the embedded
// default pays nothing. Pure: a call, an outcome and the pool's view in, the check it fails out.
import type { JsonValue } from "../errors.js";
import type { RpcCall, RpcOutcome } from "./upstreamReplies.js";

export type IntegrityCheck = "stale_block" | "logs_outside_range" | "missing_behind";

export interface PoolView {
  /** The newest block any node reported. */
  best: number;
  /** The oldest head among the nodes in service (best when they are level). */
  lowest: number;
  /** The newest `safe` and `finalized` blocks served so far (tags never go back for a client). */
  tagged: Map<string, number>;
}

const TAGS = new Set(["latest", "safe", "finalized"]);
const BY_HASH = new Set(["eth_getTransactionReceipt", "eth_getTransactionByHash"]);
const NUMBER = /"number"\s*:\s*"(0x[0-9a-fA-F]{1,16})"/;
const LOG_BLOCK_NUMBER = /"blockNumber"\s*:\s*"(0x[0-9a-fA-F]{1,16})"/g;
const LOG_BLOCK_HASH = /"blockHash"\s*:\s*"(0x[0-9a-fA-F]{64})"/g;

/** What is wrong with a successful answer, if anything; undefined for an answer that may be right. */
export function suspect(call: RpcCall, o: RpcOutcome, view: PoolView): IntegrityCheck | undefined {
  if (!o.ok) return undefined;
  const tag = call.params[0];
  if (call.method === "eth_getBlockByNumber" && typeof tag === "string" && TAGS.has(tag)) {
    const n = blockNumberOf(o);
    const newest = tag === "latest" ? view.best : (view.tagged.get(tag) ?? -1);
    return n !== undefined && n < newest ? "stale_block" : undefined;
  }
  // No block at a height some node already has: the node asked is behind it.
  if (call.method === "eth_getBlockByNumber" && isNull(o)) {
    const n = quantity(tag);
    return n !== undefined && n <= view.best ? "missing_behind" : undefined;
  }
  if (call.method === "eth_getLogs") return suspectLogs(call.params[0], o, view);
  if (BY_HASH.has(call.method) && view.lowest < view.best && isNull(o)) return "missing_behind";
  return undefined;
}

/** A tagged block served: `safe` and `finalized` are remembered so that they never go back. */
export function observeTagged(call: RpcCall, o: RpcOutcome, view: PoolView): void {
  const tag = call.params[0];
  if (call.method !== "eth_getBlockByNumber" || (tag !== "safe" && tag !== "finalized") || !o.ok) return;
  const n = blockNumberOf(o);
  if (n !== undefined && n > (view.tagged.get(tag) ?? -1)) view.tagged.set(tag, n);
}

function suspectLogs(filter: JsonValue | undefined, o: Extract<RpcOutcome, { ok: true }>, view: PoolView): IntegrityCheck | undefined {
  if (filter === null || typeof filter !== "object" || Array.isArray(filter)) return undefined;
  const text = o.raw ?? JSON.stringify(o.result);
  if (text === "[]") {
    // Empty from a node that may not have the range's end yet, while another node does.
    const to = quantity(filter.toBlock);
    return to !== undefined && view.lowest < to && to <= view.best ? "missing_behind" : undefined;
  }
  if (typeof filter.blockHash === "string") {
    const want = filter.blockHash.toLowerCase();
    for (const m of text.matchAll(LOG_BLOCK_HASH)) if (m[1]!.toLowerCase() !== want) return "logs_outside_range";
    return undefined;
  }
  const from = filter.fromBlock === "earliest" ? 0 : quantity(filter.fromBlock);
  const to = quantity(filter.toBlock);
  if (from === undefined && to === undefined) return undefined;
  for (const m of text.matchAll(LOG_BLOCK_NUMBER)) {
    const n = Number.parseInt(m[1]!, 16);
    if ((from !== undefined && n < from) || (to !== undefined && n > to)) return "logs_outside_range";
  }
  return undefined;
}

function isNull(o: Extract<RpcOutcome, { ok: true }>): boolean {
  return o.raw !== undefined ? o.raw === "null" : o.result === null;
}

function blockNumberOf(o: RpcOutcome): number | undefined {
  if (!o.ok) return undefined;
  if (o.raw !== undefined) {
    const m = NUMBER.exec(o.raw);
    return m ? Number.parseInt(m[1]!, 16) : undefined;
  }
  const r = o.result;
  return r !== null && typeof r === "object" && !Array.isArray(r) ? quantity(r.number) : undefined;
}

function quantity(v: JsonValue | undefined): number | undefined {
  return typeof v === "string" && /^0x[0-9a-fA-F]{1,16}$/.test(v) ? Number.parseInt(v, 16) : undefined;
}
