// A REST route's way onto a Connect handler: the handler is called in process, with a HandlerContext that
// carries the caller as the Connect transport would, so the same guard applies the same policy.
import { createContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { create, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { callerKey } from "../../handlers/context.js";
import type { Caller } from "../../policy/policy.js";

export interface InProcessCall<O extends DescMessage> {
  result: Promise<MessageShape<O>>;
  /** Response headers the handler set (X-RateLimit-*), also after it failed. */
  headers(): Record<string, string>;
}

export function callInProcess<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: (req: MessageShape<I>, ctx: HandlerContext) => Promise<MessageInitShape<O>> | MessageInitShape<O>,
  req: MessageShape<I>,
  caller: Caller,
  path: string,
): InProcessCall<O> {
  const ctx = createHandlerContext({
    service: method.parent,
    method,
    protocolName: "rest",
    requestMethod: "POST",
    url: path,
    contextValues: createContextValues().set(callerKey, caller),
  });
  const result = Promise.resolve()
    .then(() => handler(req, ctx))
    .then((m) => create(method.output, m as MessageInitShape<O>) as MessageShape<O>);
  return {
    result,
    headers() {
      const out: Record<string, string> = {};
      ctx.responseHeader.forEach((v, k) => (out[k] = v));
      return out;
    },
  };
}
