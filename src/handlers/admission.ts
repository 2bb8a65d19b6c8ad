// The edge's one admission: every way a transport counts a request against its caller before (or instead of)
// a guarded handler. Built once per network from its Policy and handed to every transport (HTTP routes, the
// router's unmatched and refused requests, WebSocket upgrades and messages, Connect's gate), so no transport
// reaches the policy itself and none can forget a refusal.
import type { HandlerContext } from "@connectrpc/connect";
import type { GatewayError } from "../errors.js";
import { andThen, type MaybePromise } from "../maybePromise.js";
import type { Admission, Caller, Policy } from "../policy/policy.js";
import { admissionGate } from "./guard.js";

export type { Admission, Caller } from "../policy/policy.js";

export interface EdgeAdmission {
  /**
   * `weight` requests that reach no handler (malformed, a body refused unread, no such path, an unknown key),
   * counted as JSON-RPC calls of the caller: the admission, or throws the refusal (429) to answer instead.
   */
  refused(caller: Caller, weight?: number): MaybePromise<Admission>;
  /** The same for a caller known only by address: the limit's headers. */
  refusedAddress(clientIp: string): MaybePromise<Record<string, string>>;
  /** A refusal already answered (a body with no room, 503): one request of the caller, its outcome not awaited. */
  answered(clientIp: string): void;
  /** `weight` JSON-RPC calls answered at the edge (a WebSocket's opening, its subscription calls). */
  calls(caller: Caller, weight?: number): MaybePromise<Admission>;
  /** A ZKT write refused before its handler: one write of the caller (try-it-out's budget too). */
  refusedWrite(caller: Caller): MaybePromise<Admission>;
  /** Before a body is read: the refusal a caller whose window is spent gets, counting nothing. */
  spent(caller: Caller, write?: boolean): MaybePromise<GatewayError | undefined>;
  /** Connect's request gate (after the caller is identified): `weight` requests of the method, before its body. */
  gate(ctx: HandlerContext, weight?: number): MaybePromise<void>;
}

export function edgeAdmission(policy: Policy): EdgeAdmission {
  return {
    refused: (caller, weight = 1) => policy.admitUnhandled(caller, weight),
    refusedAddress: (clientIp) => andThen(policy.admitUnhandled({ clientIp }), (a) => a.headers),
    answered: (clientIp) => {
      try {
        const admitted = policy.admitUnhandled({ clientIp });
        // Past the limit it is still counted; the 503 already said "not now".
        if (admitted instanceof Promise) admitted.catch(() => undefined);
      } catch {}
    },
    calls: (caller, weight = 1) => policy.admit("RpcService.Call", caller, weight),
    refusedWrite: (caller) => policy.admit("ZktService.WriteMessage", caller),
    spent: (caller, write = false) => policy.refusedBeforeBody(caller, write),
    gate: admissionGate(policy),
  };
}
