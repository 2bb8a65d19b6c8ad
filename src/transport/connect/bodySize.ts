// gRPC's bodies declare no length, so Connect's gate cannot weigh them as it weighs a declared one: once a
// unary request's message has arrived, it is charged what its bytes weigh beyond the one request the gate
// admitted. Past the limit it is refused before its handler runs, and the caller's next is refused unread.
import { createContextKey, type Interceptor } from "@connectrpc/connect";
import type { Caller } from "../../handlers/admission.js";
import { callerKey } from "../../handlers/context.js";
import type { MaybePromise } from "../../maybePromise.js";
import { sizeWeight } from "../http/sizeWeight.js";

/** The bytes a request body of no declared length has taken in (the HTTP layer's count). */
export const arrivedBytesKey = createContextKey<() => number>(() => 0, { description: "body bytes of no declared length arrived" });

export function bodySizeInterceptor(charge: (caller: Caller, weight: number) => MaybePromise<unknown>, bytesPerRequest: number): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      const extra = sizeWeight(req.contextValues.get(arrivedBytesKey)(), bytesPerRequest);
      if (extra > 0) await charge(req.contextValues.get(callerKey), extra);
    }
    return next(req);
  };
}
