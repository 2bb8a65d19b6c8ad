// Who is calling, in Connect's terms: an API key as `authorization: Bearer <key>` (none: public access) and
// an `idempotency-key` header, added to the client IP the HTTP layer found. Translation only: the guard
// decides what the caller may do.
import type { Interceptor } from "@connectrpc/connect";
import { GatewayError } from "../../errors.js";
import { callerKey } from "../../handlers/context.js";

export const callerInterceptor: Interceptor = (next) => async (req) => {
  const header = req.header.get("authorization");
  let apiKey: string | undefined;
  if (header !== null) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new GatewayError("unauthorized", 'the authorization header must be "Bearer <API_KEY>"');
    apiKey = m[1]!;
  }
  const idempotencyKey = req.header.get("idempotency-key") ?? undefined;
  req.contextValues.set(callerKey, { ...req.contextValues.get(callerKey), apiKey, idempotencyKey });
  return next(req);
};
