// Every operation the gateway offers, with its policy, in one table: who may call it, which limits it
// counts against, whether a caller's idempotency key makes it run once, and whether it spends the daily
// transaction quota. Every transport runs an operation through Policy (policy.ts) under this entry, so a rule
// is written here once and holds the same over JSON-RPC, ZKT REST, Connect, gRPC and gRPC-Web.
import type { DescMethod } from "@bufbuild/protobuf";

export interface OperationPolicy {
  /**
   * "optional": a key gives its rights, none means public access; "required": no key, no call; "admin": an admin
   * token (ADMIN_TOKEN), not a key, and the caller's IP counts the requests (a guessing caller is limited too).
   */
  auth: "optional" | "required" | "admin";
  /** "requests": the per-caller request limit; "requests+tryItOut": public callers also spend try-it-out. */
  limit: "requests" | "requests+tryItOut";
  /** A caller's idempotency key makes a retry replay the first outcome instead of running again. */
  idempotent: boolean;
  /** Spends one transaction of the key's daily quota (charged once, not on a replay). */
  quota: boolean;
  /** Spends one of the key's daily test-fund credits (FAUCET_CREDITS_PER_DAY), whatever its other limits. */
  faucet?: true;
  /** Takes nothing from the request limit (reading one's usage: it said more than X-RateLimit-Remaining had taken). */
  free?: true;
}

const read: OperationPolicy = { auth: "optional", limit: "requests", idempotent: false, quota: false };
const zktRead: OperationPolicy = { auth: "optional", limit: "requests+tryItOut", idempotent: false, quota: false };
const admin: OperationPolicy = { auth: "admin", limit: "requests", idempotent: false, quota: false };
const zktWrite: OperationPolicy = { auth: "optional", limit: "requests+tryItOut", idempotent: true, quota: true };

/** Keyed "<Service>.<Method>" as in the proto contracts (the service's short name). */
export const OPERATIONS = {
  // JSON-RPC: Call and Batch carry any method; the method policy (rpc/methodPolicy.ts) and each method's own
  // quota (eth_sendRawTransaction) are the core's, per call. A batch of n counts n (weight).
  "RpcService.Call": { ...read, idempotent: true },
  "RpcService.Batch": { ...read, idempotent: true },
  "RpcService.GetChainId": read,
  "RpcService.GetBlockNumber": read,
  "RpcService.GetBalance": read,
  "RpcService.SendRawTransaction": { ...read, idempotent: true },
  "RpcService.GetValidatorList": read,
  "RpcService.GetActiveValidatorList": read,
  "RpcService.GetSupportedTokens": read,
  "RpcService.SignSponsorConsent": { ...read, auth: "required" },
  "RpcService.SendSponsoredTransaction": { ...read, idempotent: true },
  // A key's own use; asking counts as a request, like any other.
  "RpcService.GetUsage": { ...read, auth: "required", free: true },
  // Embedded dev chains only; each credit spends one of the key's daily credits (300 in 0.3 s minted 280
  // ETH-equivalent on one key) and one transaction of its daily quota.
  "RpcService.RequestTestFunds": { ...read, auth: "required", quota: true, faucet: true },
  "ZktService.WriteMessage": zktWrite,
  "ZktService.ReadContract": zktRead,
  "ZktService.WriteContract": zktWrite,
  "ZktService.DeployContract": zktWrite,
  "ZktService.GetTransactionStatus": read,
  // Streams: opening one is a request (the key checked, the request limit counted); what flows after is not.
  "RpcService.SubscribeNewHeads": read,
  "RpcService.SubscribeLogs": read,
  "ZktService.WatchTransaction": read,
  // A key's webhook endpoints (webhooks.proto): the key's own, so a key is required.
  "WebhookService.RegisterWebhook": { ...read, auth: "required" },
  "WebhookService.ListWebhooks": { ...read, auth: "required" },
  "WebhookService.DeleteWebhook": { ...read, auth: "required" },
  "WebhookService.ListDeliveries": { ...read, auth: "required" },
  "WebhookService.ReplayDelivery": { ...read, auth: "required" },
  "WebhookService.GetCallbackSecret": { ...read, auth: "required" },
  "WebhookService.RotateWebhookSecret": { ...read, auth: "required" },
  "WebhookService.RotateCallbackSecret": { ...read, auth: "required" },
  // The operator's (admin.proto): an admin token, counted per IP like a public caller.
  "AdminService.ListKeys": admin,
  "AdminService.CreateKey": admin,
  "AdminService.RevokeKey": admin,
  "AdminService.SetKeyLimits": admin,
  "AdminService.RotateCallbackSecret": admin,
  "AdminService.MoveKeyWallet": admin,
  "AdminService.ListUpstreams": admin,
  "AdminService.CordonUpstream": admin,
  "AdminService.UncordonUpstream": admin,
  "AdminService.ListStuckWrites": admin,
  "AdminService.ResendWrite": admin,
  "AdminService.CancelWrite": admin,
  "AdminService.ReloadConfig": admin,
  // gRPC server reflection (a bidirectional stream): each message asked counts one request.
  "ServerReflection.ServerReflectionInfo": read,
} as const satisfies Record<string, OperationPolicy>;

export type OperationName = keyof typeof OPERATIONS;

/** The operation a Connect method is; every method of the contracts has one (checked by a test). */
export function operationOf(method: DescMethod): OperationName | undefined {
  const name = `${method.parent.name}.${method.name}`;
  return name in OPERATIONS ? (name as OperationName) : undefined;
}
