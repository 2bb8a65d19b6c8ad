// Small reads that callers send one at a time, gathered while the event loop takes in the requests of one
// turn and sent to the node as one JSON-RPC batch: under load, one HTTP exchange carries many calls (less
// client and node work per call). The first read of a turn goes at once, alone: a call that arrives alone
// waits for nothing, and the node works on it while the gateway reads the rest (a read that later ones
// join by coalescing is never held back). Only cheap point reads qualify, so no call waits behind a slow
// one (an eth_call, eth_getLogs, a full block).
import type { RpcCall, RpcOutcome } from "./upstreamReplies.js";

export const BATCHABLE = new Set([
  "eth_blockNumber",
  "eth_gasPrice",
  "eth_getBalance",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getStorageAt",
  "eth_getTransactionByHash",
  "eth_getTransactionCount",
  "eth_getTransactionReceipt",
  "eth_maxPriorityFeePerGas",
  "net_listening",
  "net_peerCount",
]);

interface Waiting {
  call: RpcCall;
  caller: AbortSignal | undefined;
  /** Settles with the call's outcome as a batch of one: what the pool's callMany answers, no wrapping promise. */
  resolve: (outcomes: RpcOutcome[]) => void;
  reject: (err: unknown) => void;
}

export class ReadBatcher {
  private waiting: Waiting[] = [];
  private scheduled = false;

  /**
   * @param send the pool's path for a batch (failover, hedging, per-call rules); `caller` only for a call
   *   sent alone (a shared batch goes on for whoever still waits). Its rejection (no node answered) is each
   *   call's, as it would have been for the call sent alone.
   * @param maxCalls most calls in one batch (nodes cap batches).
   */
  constructor(
    private readonly send: (calls: RpcCall[], caller: AbortSignal | undefined) => Promise<RpcOutcome[]>,
    private readonly maxCalls: number,
  ) {}

  /** The call's outcome, as a batch of one. */
  add(call: RpcCall, caller: AbortSignal | undefined): Promise<RpcOutcome[]> {
    if (!this.scheduled) {
      this.scheduled = true;
      // setImmediate runs after the poll phase that delivered this request: every request read in the same
      // turn has been parsed and routed by then.
      setImmediate(() => this.flush());
      return this.send([call], caller);
    }
    return new Promise((resolve, reject) => this.waiting.push({ call, caller, resolve, reject }));
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.waiting;
    this.waiting = [];
    for (let start = 0; start < all.length; start += this.maxCalls) {
      const group = all.slice(start, start + this.maxCalls);
      const caller = group.length === 1 ? group[0]!.caller : undefined;
      void this.send(
        group.map((w) => w.call),
        caller,
      ).then(
        (outcomes) => {
          for (let i = 0; i < group.length; i++) group[i]!.resolve([outcomes[i]!]);
        },
        (err: unknown) => {
          for (const w of group) w.reject(err);
        },
      );
    }
  }
}
