// How many calls a batch may hold: one rule for the Batch handler and the JSON-RPC envelope (which counts
// its malformed entries too, before any reaches the handler).
import { GatewayError } from "../errors.js";

export function requireBatchSize(count: number, max: number): void {
  if (count === 0) throw new GatewayError("invalid_request", "Invalid Request: empty batch");
  if (count > max) {
    throw new GatewayError(
      "invalid_request",
      `Invalid Request: a batch may hold at most ${max} requests, this one has ${count}; set your client's batch size to ${max} ` +
        `(viem: http(url, { batch: { batchSize: ${max} } }); ethers: new JsonRpcProvider(url, network, { batchMaxCount: ${max} }))`,
    );
  }
}
