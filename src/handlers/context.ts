// What a transport hands a handler: who called (set by the transport), and what the policy decided (set by
// the guard) — per call, as Connect context values, so an in-process REST call carries them the same way.
import { createContextKey } from "@connectrpc/connect";
import type { Access } from "../keys/access.js";
import type { Caller } from "../policy/policy.js";
import type { ClaimHooks } from "../store/idempotencyStore.js";

export const callerKey = createContextKey<Caller>({ clientIp: "unknown" }, { description: "who called, as the transport saw it" });
export const accessKey = createContextKey<Access>({ kind: "public" }, { description: "the caller's access, once admitted" });
export const claimHooksKey = createContextKey<Partial<ClaimHooks>>({}, { description: "the idempotency claim a write runs under" });
