// Request coalescing: a read identical to one already on its way upstream waits for that answer instead of
// sending its own. Many clients polling eth_blockNumber or the same eth_call at once then cost the node one
// request. Only calls whose answer is a pure function of chain state and params qualify; filter polls
// (eth_getFilterChanges consumes what it returns) and anything that writes never do.
// A joined answer is no older than the moment the shared request was sent, i.e. at most one upstream round
// trip before the joiner arrived: the same freshness a load-balanced pool of nodes gives anyway. Reads of the
// "pending" block are never shared (read-your-writes after a send).
import type { JsonValue } from "../errors.js";
import type { RpcOutcome } from "../chain/upstreamReplies.js";

const COALESCIBLE = new Set([
  "eth_blockNumber",
  "eth_call",
  "eth_estimateGas",
  "eth_feeHistory",
  "eth_gasPrice",
  "eth_getBalance",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getBlockReceipts",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getCode",
  "eth_getLogs",
  "eth_getProof",
  "eth_getStorageAt",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByHash",
  "eth_getTransactionCount",
  "eth_getTransactionReceipt",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
  "eth_maxPriorityFeePerGas",
  "eth_syncing",
  "net_listening",
  "net_peerCount",
  "web3_clientVersion",
]);

export class InflightReads {
  private readonly inflight = new Map<string, Promise<RpcOutcome>>();

  /** The coalescing key of a call, or undefined when it must go upstream on its own. */
  keyOf(method: string, params: JsonValue[]): string | undefined {
    if (!COALESCIBLE.has(method)) return undefined;
    // No params (eth_blockNumber, eth_gasPrice: the polled ones): the method's own, already hashed, name.
    // Never equal to a key with params, which always holds "[".
    if (params.length === 0) return method;
    const p = JSON.stringify(params);
    // "pending" state moves with every accepted transaction: a caller that just sent one and asks for its
    // pending nonce must not get an answer requested before the send (read-your-writes).
    return p.includes('"pending"') ? undefined : method + p;
  }

  /** The outcome of an identical call in flight, if any. */
  join(key: string): Promise<RpcOutcome> | undefined {
    return this.inflight.get(key);
  }

  /** Lets later identical calls join `outcome` until it settles. */
  track(key: string, outcome: Promise<RpcOutcome>): void {
    this.inflight.set(key, outcome);
    const forget = (): void => {
      if (this.inflight.get(key) === outcome) this.inflight.delete(key);
    };
    outcome.then(forget, forget);
  }

  get size(): number {
    return this.inflight.size;
  }
}
