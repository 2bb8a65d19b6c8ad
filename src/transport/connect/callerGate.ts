// Who is calling, in Connect's terms: an API key as `authorization: Bearer <key>` (none: public access) and
// an `idempotency-key` header, added to the client IP the HTTP layer found; then the guard's admission. It
// runs as Connect's request gate, before the body is read: a body that fails to parse still counts against
// the caller's limits, and a caller already refused costs no read or parse. Translation only: the guard
// decides what the caller may do.
import type { HandlerContext } from "@connectrpc/connect";
import { GatewayError } from "../../errors.js";
import { callerKey } from "../../handlers/context.js";
import type { MaybePromise } from "../../maybePromise.js";
import { sizeWeight } from "../http/sizeWeight.js";
import { asConnectError } from "./errorMap.js";
import { recodeParseErrors } from "./parseErrors.js";

function identify(ctx: HandlerContext): void {
  const header = ctx.requestHeader.get("authorization");
  let apiKey: string | undefined;
  if (header !== null) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new GatewayError("unauthorized", 'the authorization header must be "Bearer <API_KEY>"');
    apiKey = m[1]!;
  }
  const idempotencyKey = ctx.requestHeader.get("idempotency-key") ?? undefined;
  ctx.values.set(callerKey, { ...ctx.values.get(callerKey), apiKey, idempotencyKey });
}

/**
 * Connect's requestGate: the caller from the headers, then `admit` (the guard's admissionGate). The gate is
 * the one hook that sees each call's context before its body is parsed, so parse errors are re-coded from here.
 */
export function callerGate(
  admit: (ctx: HandlerContext, weight: number) => MaybePromise<void>,
  bodyBytesPerRequest: number,
): (ctx: HandlerContext) => Promise<void> {
  return async (ctx) => {
    recodeParseErrors(ctx);
    // A body of declared length counts by its size, as a JSON-RPC body does (gRPC's, undeclared, count one).
    const declared = Number(ctx.requestHeader.get("content-length"));
    const weight = 1 + (Number.isSafeInteger(declared) ? sizeWeight(declared, bodyBytesPerRequest) : 0);
    try {
      try {
        identify(ctx);
      } catch (malformed) {
        // A malformed authorization still costs its caller a request, as a public one (then refused).
        await admit(ctx, weight);
        throw malformed;
      }
      await admit(ctx, weight);
    } catch (err) {
      // Interceptors (and their error mapping) run only after the gate.
      throw asConnectError(err);
    }
  };
}
