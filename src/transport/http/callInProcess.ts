// A REST route's way onto a Connect handler: the handler is called in process, with a HandlerContext that
// carries the caller as the Connect transport would, so the same guard applies the same policy.
import type { ContextKey, ContextValues, HandlerContext } from "@connectrpc/connect";
import {
  create,
  isMessage,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { callerKey } from "../../handlers/context.js";
import type { Caller } from "../../handlers/admission.js";
import type { MaybePromise } from "../../maybePromise.js";
import { PlainHeaders } from "./plainHeaders.js";

export interface InProcessCall<O extends DescMessage> {
  /** The answer: at once when the handler answered at once; a handler's failure is always a rejected promise. */
  result: MaybePromise<MessageShape<O>>;
  /** Response headers the handler set (X-RateLimit-*), also after it failed. */
  headers(): Record<string, string>;
}

/**
 * Connect's createContextValues makes its three methods anew for every context: here they are the class's.
 * The few values a call carries sit in two arrays, not as symbol-keyed properties (a new object shape to find
 * per set, megamorphic `in` per get).
 */
class InProcessValues implements ContextValues {
  private readonly ids: symbol[] = [];
  private readonly values: unknown[] = [];
  get<T>(key: ContextKey<T>): T {
    const i = this.ids.indexOf(key.id);
    return i < 0 ? key.defaultValue : (this.values[i] as T);
  }
  set<T>(key: ContextKey<T>, value: T): this {
    const i = this.ids.indexOf(key.id);
    if (i < 0) {
      this.ids.push(key.id);
      this.values.push(value);
    } else this.values[i] = value;
    return this;
  }
  delete(key: ContextKey<unknown>): this {
    const i = this.ids.indexOf(key.id);
    if (i >= 0) {
      this.ids.splice(i, 1);
      this.values.splice(i, 1);
    }
    return this;
  }
}

/**
 * The HandlerContext of an in-process call: what a handler reads (values) and the guard writes (response
 * headers). Built by hand because createHandlerContext makes an AbortController and three Headers per call;
 * an in-process call has no deadline and nothing to abort (the REST
 * request's own timeouts apply), so its signal never fires. Its headers are plain records (plainHeaders.ts).
 */
class InProcessContext implements HandlerContext {
  readonly requestMethod = "POST";
  readonly protocolName = "rest";
  readonly signal = NEVER;
  readonly responseHeader = new PlainHeaders();
  private header: PlainHeaders | undefined;
  private trailer: PlainHeaders | undefined;
  readonly values: HandlerContext["values"];
  constructor(
    readonly service: DescService,
    readonly method: DescMethod,
    readonly url: string,
    caller: Caller,
  ) {
    this.values = new InProcessValues().set(callerKey, caller);
  }
  timeoutMs(): undefined {
    return undefined;
  }
  // Made only if a handler asks: none does on the JSON-RPC path.
  get requestHeader(): PlainHeaders {
    return (this.header ??= new PlainHeaders());
  }
  get responseTrailer(): PlainHeaders {
    return (this.trailer ??= new PlainHeaders());
  }
}

const NEVER = new AbortController().signal;

type Handler<I extends DescMessage, O extends DescMessage> = (req: MessageShape<I>, ctx: HandlerContext) => MaybePromise<MessageInitShape<O>>;

/**
 * The handler's answer as it gave it (a message or its init shape), for an adapter that reads a field or two
 * and needs no full message: one promise fewer than callInProcess when the handler waits.
 */
export function runInProcess<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: Handler<I, O>,
  req: MessageShape<I>,
  caller: Caller,
  path: string,
): { answer: MaybePromise<MessageInitShape<O>>; headers(): Record<string, string> } {
  const ctx = new InProcessContext(method.parent, method, path, caller);
  let answer: MaybePromise<MessageInitShape<O>>;
  try {
    answer = handler(req, ctx);
  } catch (err) {
    answer = Promise.reject(err as Error);
  }
  return { answer, headers: () => ctx.responseHeader.record };
}

export function callInProcess<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: Handler<I, O>,
  req: MessageShape<I>,
  caller: Caller,
  path: string,
): InProcessCall<O> {
  const { answer, headers } = runInProcess(method, handler, req, caller, path);
  const message = (m: MessageInitShape<O>): MessageShape<O> => (isMessage(m, method.output) ? m : create(method.output, m));
  return { result: answer instanceof Promise ? answer.then(message) : message(answer), headers };
}
