// The HTTP client to the gateway's nodes: undici's Pool, for the one request shape the gateway sends (a JSON
// POST whose answer is read whole). undici owns the protocol (framing, keep-alive, TLS); this file owns
// only what the pool needs from it: an answer's status and text, or why there was none.
import type { ConnectionOptions } from "node:tls";
import { type Dispatcher, Pool } from "undici";
import { LargeBody, SPILL_AT } from "../memory/largeBody.js";

export interface UpstreamAnswer {
  status: number;
  text: string;
  /** When the request this answers was sent (performance.now()): the caller times it without a clock read of its own. */
  sentAt: number;
}

/** Why a request got no answer: the pool turns these into failover and its messages. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly kind: "timeout" | "connection" | "protocol" | "cancelled" | "too_large",
    message: string,
  ) {
    super(message);
  }
}

export interface UpstreamHttpOptions {
  /** Connections kept at most; requests beyond them wait in order. */
  connections: number;
  /**
   * Connecting, the answer's head, and each wait for more of its body may take this long; idle connections
   * close after it. The whole exchange, a body dripped a byte at a time included, is bounded by it too.
   */
  timeoutMs: number;
  /** An answer larger than this is cut off (the connection closed) and fails: a node's answer is held whole. */
  maxAnswerBytes?: number;
  /** Extra TLS options (tests: a private CA). */
  tls?: ConnectionOptions;
}

const CLIENT_CLOSED = "client closed";
const DEFAULT_MAX_ANSWER_BYTES = 128 * 1024 * 1024;

/** undici's error codes, as the pool's three reasons. */
function classify(err: Error & { code?: string }, timeoutMs: number): UpstreamHttpError {
  // llhttp's parse errors (not HTTP/1.x, bad framing): the node, or something in front of it, is not speaking HTTP.
  if (err.name === "HTTPParserError") return new UpstreamHttpError("protocol", `the answer is not valid HTTP/1.1: ${err.message}`);
  switch (err.code) {
    case "UND_ERR_CONNECT_TIMEOUT":
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return new UpstreamHttpError("timeout", `timed out after ${timeoutMs} ms`);
    case "UND_ERR_RES_CONTENT_LENGTH_MISMATCH":
      return new UpstreamHttpError("protocol", "the answer is shorter or longer than its Content-Length");
    case "UND_ERR_DESTROYED":
    case "UND_ERR_CLOSED":
      return new UpstreamHttpError("connection", CLIENT_CLOSED);
    case "UND_ERR_SOCKET":
      return new UpstreamHttpError("connection", "connection failed: the node closed the connection");
    default:
      // The socket's own (ECONNREFUSED, a TLS certificate refused...).
      return new UpstreamHttpError("connection", `connection failed: ${err.code ?? err.message}`);
  }
}

/**
 * One request: collects its answer whole, as a dispatch handler (no stream per request: the cheapest of
 * undici's APIs), and settles the caller's promise directly.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private status = 0;
  private answer = new LargeBody();
  private sentAt = 0;
  /**
   * The whole-answer deadline, armed only when a body comes in more than one chunk: undici's bodyTimeout
   * bounds each wait for more, so a node dripping a byte a second held a call for ever (a timer per request
   * for the rare slow body, not one for every answer).
   */
  private deadline: NodeJS.Timeout | undefined;
  private answered = false;
  private retried = false;
  /** Connections the pool had opened when this was sent (see onResponseError). */
  private connectsAtSend = 0;
  /** undici's handle on the request once it started: abort() ends it (a hedge that lost). */
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled = false;

  constructor(
    private readonly client: UpstreamHttp,
    readonly body: string,
    private readonly resolve: (answer: UpstreamAnswer) => void,
    private readonly reject: (err: Error) => void,
    /** The client's headers, or those and a traceparent (tracing on). */
    readonly headers: string[],
    /** This request's deadline when not the client's (a patient read); undici's per-wait timeouts follow it. */
    readonly timeoutMs?: number,
  ) {}

  send(): void {
    this.sentAt = performance.now();
    this.connectsAtSend = this.client.connects;
    this.client.dispatch(this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cancelled) controller.abort(new UpstreamHttpError("cancelled", "cancelled"));
  }

  /** Ends the request (its connection is closed by undici): at once if it started, else when it does. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.controller?.abort(new UpstreamHttpError("cancelled", "cancelled"));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.answered = true;
    this.status = statusCode;
    const declared = Number(headers["content-length"]);
    if (declared > this.client.maxAnswerBytes) controller.abort(this.tooLarge());
    // A large answer of a known length is collected in one buffer of that length.
    else if (declared > SPILL_AT) this.answer = new LargeBody(declared);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.answer.size + chunk.length > this.client.maxAnswerBytes) return controller.abort(this.tooLarge());
    this.answer.push(chunk);
    if (this.answer.pieceCount === 2 && this.deadline === undefined) {
      const timeoutMs = this.timeoutMs ?? this.client.options.timeoutMs;
      const left = timeoutMs - (performance.now() - this.sentAt);
      const late = (): void => controller.abort(new UpstreamHttpError("timeout", `timed out after ${timeoutMs} ms (the answer was still arriving)`));
      if (left <= 0) return late();
      this.deadline = setTimeout(late, left);
    }
  }

  private tooLarge(): UpstreamHttpError {
    this.answer.clear();
    return new UpstreamHttpError("too_large", `the answer exceeds the ${this.client.maxAnswerBytes} byte limit (UPSTREAM_MAX_ANSWER_BYTES)`);
  }

  onResponseEnd(): void {
    clearTimeout(this.deadline);
    const text = this.answer.text();
    this.answer.clear();
    this.resolve({ status: this.status, text, sentAt: this.sentAt });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error & { code?: string }): void {
    clearTimeout(this.deadline);
    this.answer.clear();
    if (this.cancelled) return this.reject(new UpstreamHttpError("cancelled", "cancelled"));
    if (err instanceof UpstreamHttpError) return this.reject(err);
    // A kept-alive connection the node closed just as it was reused: nothing was answered, so the request
    // goes once more (on a fresh connection), as browsers do. A POST here is a read or a signed transaction,
    // which the node recognises if it did see it. "Reused" means no connection opened while this was out: a
    // heuristic under concurrency, where it can only cost one extra try. A fresh connection's failure is final.
    const reused = this.client.connects === this.connectsAtSend;
    if (!this.retried && !this.answered && reused && err.code === "UND_ERR_SOCKET" && !this.client.closed) {
      this.retried = true;
      this.answer.clear();
      return this.send();
    }
    this.reject(classify(err, this.timeoutMs ?? this.client.options.timeoutMs));
  }
}

export class UpstreamHttp {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly origin: string;
  /** Flat [name, value, ...]: undici reads it as is. @internal */
  readonly headers: string[];
  /** @internal */
  closed = false;
  /** @internal connections opened so far (see Exchange.onResponseError). */
  connects = 0;
  /** @internal */
  readonly maxAnswerBytes: number;

  constructor(
    readonly url: URL,
    readonly options: UpstreamHttpOptions,
  ) {
    const t = options.timeoutMs;
    this.maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      // One request per connection at a time: a slow answer (a large block) must not hold up the ones behind it.
      pipelining: 1,
      connectTimeout: t,
      headersTimeout: t,
      bodyTimeout: t,
      keepAliveTimeout: t,
      connect: options.tls ? { ...options.tls } : undefined,
    });
    this.pool.on("connect", () => void this.connects++);
    this.path = `${url.pathname}${url.search}`;
    this.origin = url.origin;
    this.headers = ["content-type", "application/json", "accept", "application/json"];
    if (url.username || url.password) {
      this.headers.push("authorization", `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`);
    }
  }

  /**
   * One POST; `signal` cancels it (the request ends and its connection closes; the promise rejects "cancelled").
   * `timeoutMs` replaces the client's deadline for this request only.
   */
  post(body: string, signal?: AbortSignal, traceparent?: string, timeoutMs?: number): Promise<UpstreamAnswer> {
    if (this.closed) return Promise.reject(new UpstreamHttpError("connection", CLIENT_CLOSED));
    return new Promise((resolve, reject) => {
      const headers = traceparent === undefined ? this.headers : [...this.headers, "traceparent", traceparent];
      const exchange = new Exchange(this, body, resolve, reject, headers, timeoutMs);
      if (signal) signal.addEventListener("abort", () => exchange.cancel(), { once: true });
      exchange.send();
    });
  }

  /** @internal */
  dispatch(exchange: Exchange): void {
    const t = exchange.timeoutMs;
    this.pool.dispatch(
      t === undefined
        ? { origin: this.origin, path: this.path, method: "POST", headers: exchange.headers, body: exchange.body }
        : { origin: this.origin, path: this.path, method: "POST", headers: exchange.headers, body: exchange.body, headersTimeout: t, bodyTimeout: t },
      exchange,
    );
  }

  /** Requests in flight are answered; then every connection closes. */
  close(): void {
    this.closed = true;
    void this.pool.close().catch(() => undefined);
  }
}
