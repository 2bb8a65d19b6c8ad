// A key an operator limited to some receivers (OpenZeppelin Relayer's allowlist) writes to those only:
// ZKT writes and messages, deploys (which have no receiver) and keyed eth_sendRawTransaction. Checked before
// anything is compiled, signed or journaled.
import { Transaction } from "ethers";
import { GatewayError } from "../errors.js";
import type { Access } from "./access.js";

/** Throws forbidden_target when `access` may not write to `to` (null: a contract creation). */
export function requireAllowedTarget(access: Access, to: string | null, what: string): void {
  if (access.kind !== "key" || !access.allowedTargets) return;
  if (to !== null && access.allowedTargets.includes(to.toLowerCase())) return;
  throw new GatewayError(
    "forbidden_target",
    to === null
      ? `this API key may only write to ${access.allowedTargets.length} listed address(es); ${what} creates a contract`
      : `this API key may not write to ${to}: it is limited to ${access.allowedTargets.join(", ")}`,
    { jsonRpcCode: -32003, details: { allowedTargets: access.allowedTargets } },
  );
}

/** The same for a caller-signed transaction (keyed eth_sendRawTransaction); one that does not decode is left to its own refusal. */
export function requireAllowedRawTarget(access: Access, raw: string): void {
  if (access.kind !== "key" || !access.allowedTargets) return;
  let to: string | null;
  try {
    to = Transaction.from(raw).to;
  } catch {
    return;
  }
  requireAllowedTarget(access, to, "this transaction");
}
