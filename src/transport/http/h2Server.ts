// The port's cleartext HTTP/2 server and its defences, per client IP across its connections (reconnecting
// starts no fresh budget): streams the peer reset before their answer began (rapid reset) and streams opened
// at all (a plain flood) — past either, every session of the IP gets GOAWAY ENHANCE_YOUR_CALM and its new
// connections are closed at accept for a doubling back-off — and answers held for a peer that keeps its
// flow-control window shut. Requests arrive a turn late (a stream reset in the same read costs no work) and
// must arrive within the request timeout, as node:http's do.
import http2 from "node:http2";
import { BodyBudget } from "./bodyBudget.js";
import { ipKey, normalise, type ProxyMatcher } from "./clientIp.js";
import { StreamResets } from "./streamResets.js";

const H2_MAX_STREAMS = 100;
/**
 * Streams one IP may reset unanswered per window before its sessions end and its connections are refused
 * (doubling): far above what cancelling clients do (a gRPC deadline, a page left), far below a storm.
 */
const H2_RESETS = { budget: 500, windowMs: 10_000, banMs: 30_000 };

export interface H2Limits {
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** HTTP/2 streams one IP may open per 10 s (a plain request flood) before it is treated as a reset storm is. */
  h2StreamsPerIpPer10s: number;
  /** HTTP/2 answers one IP has not yet taken (a shut flow-control window), across its sessions. */
  h2AnswerBytesPerIp: number;
  /** Config resilience.h2Resets. */
  h2Resets?: { budget: number; windowMs: number; banMs: number } | undefined;
  exempt?: ProxyMatcher | undefined;
}

export interface H2Observer {
  h2Banned?: ((why: "resets" | "streams") => void) | undefined;
  h2AnswerRefused?: (() => void) | undefined;
}

export interface H2Server {
  server: http2.Http2Server;
  /** Whether the IP is in its back-off: its connections are closed at accept, before a frame is read. */
  banned(ip: string): boolean;
  /** Whether this banned IP's next connection, refused at accept, is to carry a GOAWAY ENHANCE_YOUR_CALM (once). */
  noticeOwed(ip: string): boolean;
  /** Whether noticeOwed would say yes, without taking the notice. */
  owesNotice(ip: string): boolean;
  /** Closes a stream from this side (a timeout, a budget): its reset is not counted as the peer's. */
  closeStream(stream: http2.Http2Stream, code: number): void;
  close(): void;
}

type Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

export function createH2Server(limits: H2Limits, handler: Handler, observer: H2Observer = {}): H2Server {
  const exempt = limits.exempt ? { exempt: limits.exempt } : {};
  const { budget, windowMs, banMs } = limits.h2Resets ?? H2_RESETS;
  const resets = new StreamResets({ budget, windowMs, backoffMs: banMs, ...exempt });
  const opened = new StreamResets({ budget: limits.h2StreamsPerIpPer10s, windowMs, backoffMs: banMs, ...exempt });
  /** Open sessions per client IP, to end them all when the IP passes a budget. */
  const sessionsOf = new Map<string, Set<http2.ServerHttp2Session>>();
  /** Banned IPs none of whose sessions was still open to be told ENHANCE_YOUR_CALM (see noticeOwed). */
  const owed = new Set<string>();
  const ban = (ip: string, why: "resets" | "streams"): void => {
    observer.h2Banned?.(why);
    let told = false;
    for (const session of sessionsOf.get(ipKey(ip)) ?? []) told = goAway(session) || told;
    // nghttp2's own reset limit may have ended them first (INTERNAL_ERROR), before this count saw their
    // closes: the IP's next connection then carries the GOAWAY instead.
    if (!told) owed.add(ipKey(ip));
  };
  /** Streams this server closed itself (timeouts, budgets): their reset is not the peer's. */
  const closedByUs = new WeakSet<http2.Http2Stream>();
  const closeStream = (stream: http2.Http2Stream, code: number): void => {
    closedByUs.add(stream);
    stream.close(code);
  };
  const holdAnswers = answerBudget(limits, observer, closeStream);
  // At most this many streams at once per session (nginx allows 128, Go 250): each is a request in flight.
  const server = http2.createServer({ settings: { maxConcurrentStreams: H2_MAX_STREAMS } }, (req, res) => {
    // The handler starts a turn later: a stream reset in the same read as its HEADERS (rapid reset) is closed
    // by then and costs no handler work.
    setImmediate(() => {
      if (req.stream.destroyed || req.stream.closed) return;
      // http2 only closes a stream idle for the keep-alive timeout, so a body trickled a byte at a time was
      // held without end. (A bidirectional stream's request side, gRPC reflection's, is bounded alike.)
      const late = setTimeout(() => {
        if (!req.complete) closeStream(req.stream, http2.constants.NGHTTP2_CANCEL);
      }, limits.requestTimeoutMs);
      late.unref();
      req.once("end", () => clearTimeout(late));
      res.once("close", () => clearTimeout(late));
      if (holdAnswers(req, res)) handler(req, res);
    });
  });
  server.on("session", (session) => {
    const ip = normalise(session.socket?.remoteAddress ?? "unknown");
    const key = ipKey(ip);
    let mine = sessionsOf.get(key);
    if (!mine) sessionsOf.set(key, (mine = new Set()));
    mine.add(session);
    session.once("close", () => {
      mine.delete(session);
      if (mine.size === 0 && sessionsOf.get(key) === mine) sessionsOf.delete(key);
    });
    session.on("stream", (stream) => {
      if (opened.note(ip)) return ban(ip, "streams");
      // A reset the peer sent on a stream whose answer had not begun, whatever state Node's response object
      // reports (it reads finished for streams the client reset).
      stream.once("close", () => {
        if (stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR && stream.rstCode !== undefined && !stream.headersSent && !closedByUs.has(stream)) {
          if (resets.note(ip)) ban(ip, "resets");
        }
      });
    });
  });
  // A session with no frames for this long is closed (no listener for "timeout": http2 destroys it).
  server.setTimeout(limits.keepAliveTimeoutMs);
  return {
    server,
    banned: (ip) => resets.banned(ip) || opened.banned(ip),
    noticeOwed: (ip) => owed.delete(ipKey(ip)),
    owesNotice: (ip) => owed.has(ipKey(ip)),
    closeStream,
    close() {
      resets.close();
      opened.close();
    },
  };
}

/** GOAWAY ENHANCE_YOUR_CALM, then the session ended once it is out (destroy()'s own GOAWAY says NO_ERROR). */
/** GOAWAY ENHANCE_YOUR_CALM, then the session ends; false when it had already ended. */
function goAway(session: http2.ServerHttp2Session): boolean {
  if (session.destroyed || session.closed) return false;
  // (A session can be destroyed under us between the check and the call: that must not throw out of here.)
  try {
    session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
  } catch {
    return false;
  }
  setImmediate(() => session.destroy());
  return true;
}

/**
 * An empty SETTINGS (the server's preface) and a GOAWAY ENHANCE_YOUR_CALM (last stream 0): written to a
 * connection refused at accept, nothing of it read.
 */
export const CALM_GOAWAY = Buffer.from([
  ...[0, 0, 0, 4, 0, 0, 0, 0, 0], // SETTINGS: length 0, type 4, no flags, stream 0
  ...[0, 0, 8, 7, 0, 0, 0, 0, 0], // GOAWAY: length 8, type 7, no flags, stream 0
  ...[0, 0, 0, 0, 0, 0, 0, 11], // last stream 0, ENHANCE_YOUR_CALM
]);

/**
 * HTTP/2 answers are held until their stream closes: a peer that keeps its window shut holds every answer it
 * asked for in this process. Each IP's answers not yet taken are counted across its sessions, as bodies are;
 * a stream whose answer would pass the share is reset ENHANCE_YOUR_CALM (counted). REST and Connect answers
 * alike: both write through the response. The hold returns false when the stream was reset at once (its IP
 * already holds its share, so it gets no work done).
 */
function answerBudget(
  limits: H2Limits,
  observer: H2Observer,
  closeStream: (stream: http2.Http2Stream, code: number) => void,
): (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => boolean {
  const answers = new BodyBudget({
    totalBytes: Number.MAX_SAFE_INTEGER,
    perIpBytes: limits.h2AnswerBytesPerIp,
    ...(limits.exempt ? { exempt: limits.exempt } : {}),
  });
  return (req, res) => {
    const ip = normalise(req.socket?.remoteAddress ?? "unknown");
    const refuse = (): false => {
      observer.h2AnswerRefused?.();
      closeStream(req.stream, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      return false;
    };
    if (answers.full(ip)) return refuse();
    let held = 0;
    let refused = false;
    const take = (chunk: unknown, encoding?: unknown): boolean => {
      if (refused) return false;
      if (chunk === undefined || chunk === null || typeof chunk === "function") return true;
      const n =
        typeof chunk === "string"
          ? Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
          : (chunk as Uint8Array).length;
      if (n === 0 || answers.reserveOrFirst(ip, n)) {
        held += n;
        return true;
      }
      refused = true;
      return refuse();
    };
    req.stream.once("close", () => answers.release(ip, held));
    const write = res.write;
    const end = res.end;
    res.write = function counted(this: http2.Http2ServerResponse, chunk: unknown, ...rest: unknown[]): boolean {
      return take(chunk, rest[0]) && (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function counted(this: http2.Http2ServerResponse, chunk?: unknown, ...rest: unknown[]): http2.Http2ServerResponse {
      if (!take(chunk, rest[0])) return this;
      return (end as (...a: unknown[]) => http2.Http2ServerResponse).call(this, chunk, ...rest);
    } as typeof res.end;
    return true;
  };
}
