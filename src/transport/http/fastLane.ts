// An HTTP/1.1 fast lane for the requests that make up nearly all of a gateway's traffic: a POST with a
// Content-Length body to a REST route (JSON-RPC, ZKT). It parses exactly that shape itself and answers with a
// single write, several times cheaper per request than node:http (bench/README.md). The first request it
// does not take hands the connection, unread bytes and all, to node:http for good, so everything else
// (GET, chunked bodies, Expect, Upgrade, oversized or odd heads, HTTP/1.0, Connection: close, errors in the
// request) keeps node:http's own behaviour. Requests on one connection are answered one at a time, in order.
import { STATUS_CODES, type IncomingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import type { HttpAnswer, RestInput } from "./restRouter.js";
import type { MaybePromise } from "../../maybePromise.js";
import { endAndClose } from "./endAndClose.js";
import { BODY_BUDGET_EXCEEDED, type BodyBudget } from "./bodyBudget.js";
import type { BodyRefused } from "./budgetedHandler.js";
import { normalise } from "./clientIp.js";
import { giveBack, LargeBody } from "../../memory/largeBody.js";
import { GatewayError } from "../../errors.js";

export interface FastLaneOptions {
  /** Whether the lane answers this method and path; the connection goes to node:http otherwise. */
  serves(method: string, path: string): boolean;
  /** The answer, at once when it is ready (no promise per request for locally answered calls). */
  handle(input: RestInput): MaybePromise<HttpAnswer>;
  bodyLimitBytes: number;
  /** An idle connection is closed after this long (node:http's keepAliveTimeout). */
  keepAliveTimeoutMs: number;
  /** A request head that takes longer than this to arrive is answered 408 and the connection closed. */
  headersTimeoutMs: number;
  /** A request whose head and body take longer than this to arrive is answered 408 (slow-drip clients). */
  requestTimeoutMs: number;
  /** A body that does not arrive with its head is held against this while it arrives (503 when it does not fit). */
  budget?: BodyBudget;
  /** A large body its route answered without reading (a refusal): dropped, never gathered or decoded. */
  droppedUnread?: () => void;
  /** A body refused for room (the 503 above). */
  bodyRefused?: BodyRefused;
}

/** node:http's default limit; a longer head goes to node:http, which answers 431. */
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_END = Buffer.from("\r\n\r\n");
const NOTHING = Buffer.alloc(0);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than tab: node:http refuses them in a header value; so do we (by handing off). */
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Headers whose presence changes framing or semantics: node:http handles those requests. */
const HAND_OFF = new Set(["transfer-encoding", "expect", "upgrade"]);
const DIGITS = /^\d{1,10}$/;
/** Bytes read ahead while a request is being answered; past this the socket is paused (back-pressure). */
const READ_AHEAD_BYTES = 64 * 1024;
/**
 * A body larger than this goes to its route before it is gathered, as node:http gives it (bytes() to come): a
 * route that refuses it unread (a caller over its limit) costs no copy, decode or parse of it.
 */
const HAND_EARLY_BYTES = 64 * 1024;
/** Control characters, space and DEL: never in a request target (node:http answers 400). */
const BAD_TARGET = /[\x00-\x20\x7f]/;
const CLOSE = /close/i;

interface Head {
  method: string;
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Bytes of the request line and headers, the blank line included. */
  headLength: number;
  contentLength: number;
  /** Where the Content-Length digits are in the head's bytes. */
  lengthAt: number;
  lengthEnd: number;
}

interface SeenHead {
  head: Head;
  bytes: Buffer;
}

/**
 * A keep-alive client sends the same head again and again, but for Content-Length (JSON-RPC ids and params
 * change a body's length). When `buf` starts with the last head taken on the connection, byte for byte
 * around a run of digits where that head's Content-Length was, this is its parse with the new length:
 * two byte compares and a scan of the digits instead of a parse. Undefined when it is not such a repeat (then it
 * is parsed).
 */
function repeatedHead(buf: Buffer, seen: SeenHead): Head | undefined {
  const { head, bytes } = seen;
  const { lengthAt, lengthEnd } = head;
  const restLength = bytes.length - lengthEnd;
  if (buf.length < lengthAt + 1 + restLength || buf.compare(bytes, 0, lengthAt, 0, lengthAt) !== 0) return undefined;
  let end = lengthAt;
  let contentLength = 0;
  for (let c = buf[end]!; c >= 0x30 && c <= 0x39 && end - lengthAt < 10; c = buf[++end]!) contentLength = contentLength * 10 + c - 0x30;
  if (end === lengthAt || buf.length < end + restLength || buf.compare(bytes, lengthEnd, bytes.length, end, end + restLength) !== 0) return undefined;
  if (end === lengthEnd && contentLength === head.contentLength) return head;
  const headers = Object.freeze({ ...head.headers, "content-length": buf.toString("latin1", lengthAt, end) });
  return { ...head, headers, headLength: end + restLength, contentLength, lengthEnd: end };
}

/**
 * Serves `socket` (whose first bytes, already read, are `first`) until a request the lane does not take;
 * then calls `handOff` with every byte not yet consumed, from that request's first byte on.
 */
export function serveFastLane(socket: Socket, first: Buffer, options: FastLaneOptions, handOff: (unread: Buffer) => void): void {
  new FastLaneConnection(socket, first, options, handOff).start();
}

/** A large request handed to its route before its body was gathered: where its body is, and the route's bytes() waiting for it (once asked). */
interface EarlyRequest {
  headLength: number;
  end: number;
  deliver?: (bytes: Buffer) => void;
  fail?: (err: Error) => void;
  delivered: boolean;
  /** The buffer delivered, when the lane kept no view of it: given back once the route releases it. */
  given?: Buffer | undefined;
}

/** One connection in the lane: its bytes, the request being received, and the one being answered. */
class FastLaneConnection {
  private buf: Buffer;
  /**
   * A body still arriving: its chunks, gathered once the whole request is there (awaitedEnd: where it ends
   * in buf plus these; 0 when no body is awaited). Gathered once, not joined chunk by chunk (quadratic).
   */
  private arriving: LargeBody | undefined = undefined;
  private awaitedEnd = 0;
  private busy = false;
  private done = false;
  /** When the first byte of the request being received arrived (0: none pending). */
  private receivingSince = 0;
  /** Armed only while a request is incomplete: a complete one (the usual case) never costs a timer. */
  private deadline: NodeJS.Timeout | undefined = undefined;
  private deadlineForHead = false;
  /** The last head the lane took on this connection, to recognise it when the client sends it again. */
  private last: SeenHead | undefined = undefined;
  /** Bytes of the body budget held for the request being received (0: none; a whole body never takes any). */
  private reserved = 0;
  private early: EarlyRequest | undefined = undefined;
  /** Bytes of a refused body still to drop as they arrive, and the answer written once they have. */
  private skipLeft = 0;
  private held: HttpAnswer | undefined = undefined;

  constructor(
    private readonly socket: Socket,
    first: Buffer,
    private readonly options: FastLaneOptions,
    private readonly handOff: (unread: Buffer) => void,
  ) {
    this.buf = first;
  }

  start(): void {
    const { socket } = this;
    socket.setNoDelay(true);
    socket.setTimeout(this.options.keepAliveTimeoutMs);
    socket.on("data", this.onData);
    socket.on("timeout", this.onTimeout);
    socket.once("close", this.detach);
    this.pump();
  }

  private release(): void {
    if (this.reserved > 0) this.options.budget?.release(normalise(this.socket.remoteAddress ?? "unknown"), this.reserved);
    this.reserved = 0;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.skipLeft > 0) {
      if (chunk.length <= this.skipLeft) {
        this.skipLeft -= chunk.length;
        // Dropped unread: its memory goes back now, not when a collection gets to it.
        giveBack(chunk);
        if (this.skipLeft === 0) this.answerHeld();
        return;
      }
      this.buf = chunk.subarray(this.skipLeft);
      this.skipLeft = 0;
      return this.answerHeld();
    }
    const arriving = this.arriving;
    if (arriving) {
      // The lane is the socket's one reader: a read copied into the body's spill is given back at once.
      if (arriving.push(chunk) !== chunk) giveBack(chunk);
      if (this.buf.length + arriving.size < this.awaitedEnd) return;
      this.buf = arriving.after(this.buf);
      this.arriving = undefined;
      this.awaitedEnd = 0;
      if (this.early) return this.deliver();
    } else this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (!this.busy) this.pump();
    // One client's pipelined (or junk) bytes wait in the kernel, not in our memory, while it is answered.
    else if (this.buf.length > READ_AHEAD_BYTES) this.socket.pause();
  };

  private readonly onTimeout = (): void => {
    if (!this.busy) this.socket.destroy();
  };

  private clearDeadline(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = undefined;
  }

  /** Like node:http: 408 and close when the head (or the whole request) is late. */
  private readonly expire = (): void => {
    this.deadline = undefined;
    // Busy with a route that has its request but not yet all of its body (or a refused body still dropping):
    // the deadline holds for the body too.
    if (this.done || (this.busy && !this.arriving && this.skipLeft === 0)) return;
    this.detach();
    endAndClose(this.socket, REQUEST_TIMEOUT);
  };

  private armDeadline(forHead: boolean): void {
    if (this.deadline && this.deadlineForHead === forHead) return;
    this.clearDeadline();
    this.deadlineForHead = forHead;
    const { headersTimeoutMs, requestTimeoutMs } = this.options;
    const limit = forHead ? Math.min(headersTimeoutMs, requestTimeoutMs) : requestTimeoutMs;
    this.deadline = setTimeout(this.expire, Math.max(0, this.receivingSince + limit - Date.now()));
  }

  private readonly detach = (): void => {
    this.done = true;
    // A route waiting for a body that will not come now hears so (it answers no one).
    this.early?.fail?.(new GatewayError("client_gone", "the client closed the request before its body arrived"));
    this.early = undefined;
    // A route may still hold this lane (its bytes() call) until its answer settles: what was read goes now.
    this.arriving?.clear(true);
    this.arriving = undefined;
    this.release();
    this.clearDeadline();
    const { socket } = this;
    socket.off("data", this.onData);
    socket.off("timeout", this.onTimeout);
    socket.off("close", this.detach); // else it keeps this lane's state (buffers, last head) for the socket's life
    socket.setTimeout(0);
  };

  private giveUp(): void {
    this.detach();
    this.socket.resume();
    this.handOff(this.buf);
  }

  private pump(): void {
    while (!this.busy && !this.done) {
      const buf = this.buf;
      if (buf.length === 0) {
        this.receivingSince = 0;
        this.clearDeadline();
        return;
      }
      if (this.receivingSince === 0) this.receivingSince = Date.now();
      let head: Head | null | undefined = this.last && repeatedHead(buf, this.last);
      if (head === undefined) {
        head = parseHead(buf);
        if (head === undefined) {
          // A head that is too long, or that node:http would refuse before its end (bare CR or LF, a method
          // that is no token), is node:http's to answer (431, 400) at once, not after a timeout.
          if (buf.length > MAX_HEAD_BYTES || !plausibleHeadStart(buf)) return this.giveUp();
          return this.armDeadline(true);
        }
        if (head === null || !this.options.serves(head.method, head.path)) return this.giveUp();
        this.last = { head, bytes: Buffer.from(buf.subarray(0, head.headLength)) };
      }
      if (head.contentLength > this.options.bodyLimitBytes) return this.giveUp();
      const end = head.headLength + head.contentLength;
      if (head.contentLength > HAND_EARLY_BYTES) return this.handEarly(head, end);
      if (buf.length < end) return void this.awaitBody(head, end);
      this.release();
      this.clearDeadline();
      const body = buf.toString("utf8", head.headLength, end);
      // (Not an empty view of a large body's buffer, kept for as long as the connection idles.)
      this.buf = end === buf.length ? NOTHING : buf.subarray(end);
      this.receivingSince = 0;
      this.busy = true;
      const { method, url, path, headers } = head;
      this.run(
        { method, url, path, headers, remoteAddress: this.socket.remoteAddress, bytes: () => Promise.resolve(Buffer.from(body, "utf8")), text: body },
        this.respond,
      );
    }
  }

  /** The route's answer to a request, written when it settles (`then`); a route that throws ends the connection. */
  private run(input: RestInput, then: (a: HttpAnswer) => void): void {
    let answer: MaybePromise<HttpAnswer>;
    try {
      answer = this.options.handle(input);
    } catch {
      return void this.socket.destroy();
    }
    if (answer instanceof Promise) answer.then(then, () => this.socket.destroy());
    else then(answer);
  }

  /**
   * Gathers the rest of a body as it arrives, held against the budget (one that came with its head costs
   * nothing here); false when it does not fit (answered 503, the connection closed).
   */
  private awaitBody(head: Head, end: number): boolean {
    const { budget } = this.options;
    if (this.reserved === 0 && budget && !budget.reserve(normalise(this.socket.remoteAddress ?? "unknown"), head.contentLength)) {
      this.options.bodyRefused?.(this.socket.remoteAddress, head.headers);
      this.detach();
      endAndClose(this.socket, BODY_BUDGET_EXCEEDED);
      return false;
    }
    this.reserved = head.contentLength;
    this.awaitedEnd = end;
    this.arriving = new LargeBody(end - this.buf.length);
    this.armDeadline(false);
    return true;
  }

  /** A large request to its route now, its body given when asked and complete (deliver); see HAND_EARLY_BYTES. */
  private handEarly(head: Head, end: number): void {
    if (this.buf.length < end && !this.awaitBody(head, end)) return;
    this.busy = true;
    const request: EarlyRequest = { headLength: head.headLength, end, delivered: false };
    this.early = request;
    const bytes = (): Promise<Buffer> =>
      new Promise<Buffer>((resolve, reject) => {
        request.deliver = resolve;
        request.fail = reject;
        if (this.early === request) this.deliver();
      });
    const { method, url, path, headers } = head;
    const release = (): void => {
      if (request.given) giveBack(request.given);
      request.given = undefined;
    };
    this.run({ method, url, path, headers, remoteAddress: this.socket.remoteAddress, bytes, release }, (a) => {
      if (this.early === request) this.answeredEarly(a);
    });
  }

  /** The early request's body, once its route asked for it and all of it is here. */
  private deliver(): void {
    const request = this.early;
    if (!request?.deliver || this.arriving || request.delivered) return;
    request.delivered = true;
    this.release();
    this.clearDeadline();
    const bytes = this.buf.subarray(request.headLength, request.end);
    if (request.end === this.buf.length) request.given = this.buf;
    this.buf = request.end === this.buf.length ? NOTHING : this.buf.subarray(request.end);
    this.receivingSince = 0;
    request.deliver(bytes);
  }

  /** The early request's answer: a body its route never took is dropped, not gathered, before it is written. */
  private answeredEarly(answer: HttpAnswer): void {
    const request = this.early!;
    this.early = undefined;
    if (!request.delivered) {
      this.options.droppedUnread?.();
      this.release();
      if (this.arriving) {
        this.skipLeft = this.awaitedEnd - this.buf.length - this.arriving.size;
        this.arriving.clear(true);
        this.arriving = undefined;
        this.awaitedEnd = 0;
        // The read that brought the head (and the body's first bytes) goes back too: a flood of refused
        // bodies would otherwise leave one per request for the GC, enough to bring on full collections.
        giveBack(this.buf);
        this.buf = NOTHING;
        this.held = answer;
        return;
      }
      this.buf = request.end === this.buf.length ? NOTHING : this.buf.subarray(request.end);
    }
    this.clearDeadline();
    this.receivingSince = 0;
    this.respond(answer);
  }

  private answerHeld(): void {
    this.clearDeadline();
    this.receivingSince = 0;
    const answer = this.held!;
    this.held = undefined;
    this.respond(answer);
  }

  // Written at the end of the event loop's turn (queueWrite); the next request is read only after that, so
  // answers on a connection stay in order even when one is ready at once.
  private readonly respond = (answer: HttpAnswer): void => {
    if (this.done || !this.socket.writable) return;
    queueWrite(this.socket, serialize(answer, this.options.keepAliveTimeoutMs), this.afterWrite);
  };

  private readonly afterWrite = (): void => {
    this.busy = false;
    if (this.socket.isPaused()) this.socket.resume();
    this.pump();
  };
}

const REQUEST_TIMEOUT = "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

/**
 * Whether the bytes of an incomplete head could still become one the lane takes: the method is token
 * characters up to a space, and every CR is followed by LF and every LF preceded by CR.
 */
function plausibleHeadStart(buf: Buffer): boolean {
  let i = 0;
  while (i < buf.length && TOKEN_BYTE[buf[i]!] === 1) i++;
  if (i < buf.length && (i === 0 || buf[i] !== 0x20)) return false;
  for (i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) if (i === 0 || buf[i - 1] !== 0x0d) return false;
  for (i = buf.indexOf(0x0d); i >= 0 && i + 1 < buf.length; i = buf.indexOf(0x0d, i + 1)) if (buf[i + 1] !== 0x0a) return false;
  return true;
}

/** 1 for the bytes of an HTTP token (RFC 9110 §5.6.2). */
const TOKEN_BYTE = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN_BYTE[c.charCodeAt(0)] = 1;

/** Optional whitespace around a header value is SP and HTAB only (RFC 9110 §5.6.3); String.trim takes more. */
function trimOws(v: string): string {
  let a = 0;
  let b = v.length;
  while (a < b && (v.charCodeAt(a) === 0x20 || v.charCodeAt(a) === 0x09)) a++;
  while (b > a && (v.charCodeAt(b - 1) === 0x20 || v.charCodeAt(b - 1) === 0x09)) b--;
  return a === 0 && b === v.length ? v : v.slice(a, b);
}

/** The request head, undefined while incomplete, null when the lane must not take the request. */
function parseHead(buf: Buffer): Head | null | undefined {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) return undefined;
  if (end > MAX_HEAD_BYTES) return null;
  // One latin1 string, walked with indexOf: no intermediate arrays of lines or words.
  const head = buf.toString("latin1", 0, end);
  let lineEnd = head.indexOf("\r\n");
  if (lineEnd < 0) lineEnd = head.length;
  const sp1 = head.indexOf(" ");
  const sp2 = sp1 < 0 ? -1 : head.indexOf(" ", sp1 + 1);
  if (sp1 <= 0 || sp2 < 0 || sp2 > lineEnd) return null;
  const method = head.slice(0, sp1);
  const url = head.slice(sp1 + 1, sp2);
  if (head.slice(sp2 + 1, lineEnd) !== "HTTP/1.1" || url.charCodeAt(0) !== 0x2f /* "/" */ || !TOKEN.test(method) || BAD_TARGET.test(url)) return null;
  const headers: IncomingHttpHeaders = {};
  let contentLength = -1;
  let lengthAt = -1;
  let lengthEnd = -1;
  for (let pos = lineEnd + 2; pos < head.length; ) {
    let next = head.indexOf("\r\n", pos);
    if (next < 0) next = head.length;
    const colon = head.indexOf(":", pos);
    if (colon <= pos || colon > next) return null;
    const name = headerName(head.slice(pos, colon));
    const value = trimOws(head.slice(colon + 1, next));
    pos = next + 2;
    // A repeated header has per-name merge rules in node:http; leave those (rare) requests to it.
    if (name === null || BAD_VALUE.test(value) || HAND_OFF.has(name) || headers[name] !== undefined) return null;
    if (name === "content-length") {
      if (!DIGITS.test(value)) return null;
      contentLength = Number(value);
      lengthAt = head.indexOf(value, colon + 1);
      lengthEnd = lengthAt + value.length;
      // llhttp takes spaces, not tabs, after the digits: anything but that exact shape is node:http's.
      if (head.lastIndexOf("\t", next - 1) >= lengthEnd) return null;
    } else if (name === "connection" && CLOSE.test(value)) return null;
    headers[name] = value;
  }
  // node:http requires Host on HTTP/1.1 (and answers 400 without it).
  if (contentLength < 0 || headers.host === undefined) return null;
  const query = url.indexOf("?");
  // Frozen: a later request on the connection may be given the same object (repeatedHead).
  return {
    method,
    url,
    path: query < 0 ? url : url.slice(0, query),
    headers: Object.freeze(headers),
    headLength: end + HEAD_END.length,
    contentLength,
    lengthAt,
    lengthEnd,
  };
}

/**
 * Header names as sent -> lower case, or null when not a token; clients repeat the same few names. A plain
 * Map, not lru-cache: one get per header on the hot path, and a memo that stops growing at 1,000 names needs
 * no eviction.
 */
const headerNames = new Map<string, string | null>();

function headerName(raw: string): string | null {
  let name = headerNames.get(raw);
  if (name === undefined) {
    name = TOKEN.test(raw) ? raw.toLowerCase() : null;
    if (headerNames.size < 1_000) headerNames.set(raw, name);
  }
  return name;
}

const pendingWrites: { socket: Socket; data: string; then: () => void }[] = [];

/** Answers finished in one turn of the event loop are written together at its end. */
function queueWrite(socket: Socket, data: string, then: () => void): void {
  if (pendingWrites.push({ socket, data, then }) === 1) setImmediate(flushWrites);
}

function flushWrites(): void {
  const writes = pendingWrites.splice(0);
  for (const w of writes) if (w.socket.writable) w.socket.write(w.data);
  for (const w of writes) w.then();
}

let tailText = "";
let tailSecond = -1;
let tailKeepAliveMs = -1;

/**
 * The headers every answer ends with (Date, Connection, Keep-Alive), formatted once a second as node:http
 * formats Date.
 */
function commonTail(keepAliveMs: number): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== tailSecond || keepAliveMs !== tailKeepAliveMs) {
    tailSecond = second;
    tailKeepAliveMs = keepAliveMs;
    tailText = `date: ${new Date(now).toUTCString()}\r\nconnection: keep-alive\r\nkeep-alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n`;
  }
  return tailText;
}

/** Status lines by code, built once each. */
const statusLines: string[] = [];

function statusLine(status: number): string {
  return (statusLines[status] ??= `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Unknown"}\r\n`);
}

/** BAD_VALUE.test as a loop: these values are short, and a regular expression call per header is not. */
function splitsResponse(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/** The whole response as one string: one write, one syscall. Exported for bench/hotPath.ts. */
export function serialize(answer: HttpAnswer, keepAliveMs: number): string {
  let head = statusLine(answer.status);
  const headers = answer.headers;
  for (const name in headers) {
    const value = headers[name]!;
    // Our own headers only, but never let a value split the response.
    if (!splitsResponse(value)) head += `${name}: ${value}\r\n`;
  }
  head += commonTail(keepAliveMs);
  if (answer.status === 204 || answer.status === 304) return head + "\r\n";
  const body = answer.body ?? "";
  return `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
