// Which JSON-RPC methods a caller may reach. Policy sits in front of the upstream pool, never inside it.
import { GatewayError } from "../errors.js";

import type { Access } from "../keys/access.js";

/**
 * The node methods forwarded, by exact name: an allow-list, so a name the node might read differently
 * (`eth_sendtransaction`, a trailing NUL, a method a future node adds) never reaches it unexamined.
 */
const FORWARDED_METHODS = new Set([
  "eth_blockNumber",
  "eth_chainId",
  "eth_call",
  "eth_estimateGas",
  "eth_createAccessList",
  "eth_simulateV1",
  "eth_gasPrice",
  "eth_maxPriorityFeePerGas",
  "eth_feeHistory",
  "eth_getBalance",
  "eth_getCode",
  "eth_getStorageAt",
  "eth_getTransactionCount",
  "eth_getProof",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getBlockReceipts",
  "eth_getBlockTransactionCountByHash",
  "eth_getBlockTransactionCountByNumber",
  "eth_getUncleCountByBlockHash",
  "eth_getUncleCountByBlockNumber",
  "eth_getUncleByBlockHashAndIndex",
  "eth_getUncleByBlockNumberAndIndex",
  "eth_getTransactionByHash",
  "eth_getTransactionByBlockHashAndIndex",
  "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionReceipt",
  "eth_getLogs",
  "eth_newFilter",
  "eth_newBlockFilter",
  "eth_newPendingTransactionFilter",
  "eth_getFilterChanges",
  "eth_getFilterLogs",
  "eth_uninstallFilter",
  "eth_syncing",
  "eth_mining",
  "eth_hashrate",
  "eth_protocolVersion",
  "eth_sendRawTransaction",
  "net_version",
  "net_listening",
  "net_peerCount",
  "web3_clientVersion",
  "web3_sha3",
]);
/** Reachable only through a key; the public endpoints are read-only. */
export const WRITE_METHODS = new Set(["eth_sendRawTransaction", "platform_sendSponsoredTransaction", "stability_sendSponsoredTransaction"]);
/** Named in the refusal so a caller knows it is deliberate: node-operator and dev-node surfaces, the node's own accounts. */
const BLOCKED_PREFIXES = ["admin_", "debug_", "personal_", "miner_", "txpool_", "engine_", "anvil_", "hardhat_", "evm_", "ganache_"];
const BLOCKED_METHODS = new Set([
  "eth_sendTransaction",
  "eth_sign",
  "eth_signTransaction",
  "eth_signTypedData",
  "eth_signTypedData_v3",
  "eth_signTypedData_v4",
  "eth_accounts",
  "eth_coinbase",
  "eth_submitWork",
  "eth_submitHashrate",
  "eth_subscribe",
  "eth_unsubscribe",
]);
const UNSUPPORTED_METHODS = new Map([["eth_blobBaseFee", "Method not found: eth_blobBaseFee is not supported on this network"]]);

/** `unknown` is not forwarded (custom methods only); a write is `write` or `unknown write`. */
type MethodClass = "unsupported" | "blocked" | "unknown" | "unknown write" | "write" | "read";

/** A method's class by name, worked out once, not a dozen prefix tests per call. */
const classes = new Map<string, MethodClass>();
/** Method names are caller-chosen: the memo keeps only short names, and stops growing at a thousand. */
const MAX_CLASSES = 1_000;
const MAX_REMEMBERED_NAME = 64;

function classify(method: string): MethodClass {
  let c = classes.get(method);
  if (c === undefined) {
    if (UNSUPPORTED_METHODS.has(method)) c = "unsupported";
    else if (BLOCKED_METHODS.has(method) || BLOCKED_PREFIXES.some((p) => method.startsWith(p))) c = "blocked";
    else {
      const forwarded = FORWARDED_METHODS.has(method);
      c = WRITE_METHODS.has(method) ? (forwarded ? "write" : "unknown write") : forwarded ? "read" : "unknown";
    }
    if (classes.size < MAX_CLASSES && method.length <= MAX_REMEMBERED_NAME) classes.set(method, c);
  }
  return c;
}

/** Throws the error a caller gets for a method it may not call; returns normally when allowed. */
export function checkMethodAllowed(method: string, access: Access, isCustom: boolean): void {
  // One rule for every transport (JSON-RPC answered -32600 here, Connect's Call -32601).
  if (method === "") throw new GatewayError("invalid_request", 'Invalid Request: "method" must not be empty');
  const c = classify(method);
  if (c === "read") return;
  if (c === "unsupported") throw new GatewayError("method_not_found", UNSUPPORTED_METHODS.get(method)!);
  if (c === "blocked") throw new GatewayError("method_not_found", `Method not found: ${method} is not available on this gateway`);
  if ((c === "unknown" || c === "unknown write") && !isCustom) throw new GatewayError("method_not_found", `Method not found: ${method}`);
  if (c !== "unknown" && access.kind === "public") {
    throw new GatewayError(
      "key_required",
      `${method} needs an API key: the public endpoint is read-only. Get a free key with POST /portal/keys, then send to POST /zgt/<API_KEY>`,
    );
  }
}
