// One port, HTTP/1.1 and cleartext HTTP/2 (gRPC needs h2): Node refuses allowHTTP1 without TLS, so we read
// the first bytes of each connection and hand the socket to the http2 or http server accordingly.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { NodeHandlerFn } from "./nodeTypes.js";
import { serveFastLane, type FastLaneOptions } from "./fastLane.js";
import { destroyOnError } from "./destroyOnError.js";
import { endAndClose } from "./endAndClose.js";
import { normalise, type ProxyMatcher } from "./clientIp.js";
import { ConnectionSlots } from "./connectionSlots.js";
import { BodyBudget } from "./bodyBudget.js";
import { spillArriving } from "./spillArriving.js";
import { StreamResets } from "./streamResets.js";

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface DualServer {
  port: number;
  /**
   * Stops accepting connections, lets requests in flight be answered (at most `graceMs`), then closes every
   * connection. Without the wait a request running at shutdown had its connection cut, unanswered.
   */
  close(graceMs?: number): Promise<void>;
}

const CLOSE_GRACE_MS = 5_000;
const H2_MAX_STREAMS = 100;
/**
 * Streams one IP may reset unanswered in 10 s before its sessions end and its connections are refused for
 * 30 s (doubling): far above what cancelling clients do (a gRPC deadline, a page left), far below a storm.
 */
const H2_RESETS = { budget: 500, windowMs: 10_000, backoffMs: 30_000 };

/** Bounds on every connection, whatever state it is in (config `http`). */
export interface ConnectionLimits {
  /** A request head (and, before that, the first bytes that tell HTTP/1.1 from h2) must arrive within this. */
  headersTimeoutMs: number;
  /** A whole request, head and body, must arrive within this. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection (HTTP/1.1 or h2) is closed after this. */
  keepAliveTimeoutMs: number;
  /** Open connections past this are answered 503 and closed (each costs a file descriptor). */
  maxConnections: number;
  /** Open connections per client IP past this are answered 503 and closed (the overall cap is not one IP's to take). */
  maxConnectionsPerIp: number;
  /** Addresses exempt from the per-IP cap and body share (trusted proxies). */
  exempt?: ProxyMatcher;
  /** Request bodies still arriving (see limits/bodyBudget.ts). */
  bodyBudgetBytes: number;
  bodyBudgetPerIpBytes: number;
  /** One HTTP/2 session's share of it. */
  bodyBudgetPerSessionBytes: number;
  /** HTTP/2 answers one IP has not yet taken (a shut flow-control window), across its sessions. */
  h2AnswerBytesPerIp: number;
  /** Connections of this port held elsewhere (WebSockets handed to fan-out shards): they count too. */
  heldElsewhere?: () => number;
  /** HTTP/2 streams one IP may open per 10 s (a plain request flood) before it is treated as a reset storm is. */
  h2StreamsPerIpPer10s: number;
}

/** What the edge refused, for metrics. */
export interface EdgeObserver {
  /** An IP passed an HTTP/2 budget (resets or streams): its sessions were ended, its new connections refused. */
  h2Banned?: (why: "resets" | "streams") => void;
  /** A connection closed at accept, before a byte of it was read, because its IP is in its back-off. */
  refusedAtAccept?: () => void;
  /** A large HTTP/1.1 body its route refused unread (fastLane.ts): dropped as it arrived, never decoded. */
  bodyDroppedUnread?: () => void;
  /** An HTTP/2 stream reset because its IP's answers not yet taken passed h2AnswerBytesPerIp. */
  h2AnswerRefused?: () => void;
}

/** Answer to a connection past a cap: plain HTTP/1.1, which is what nearly every client speaks first. */
const refusal = (error: string): string => {
  const body = JSON.stringify({ error });
  return (
    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n" +
    `connection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`
  );
};
const BODY_REFUSED = JSON.stringify({ error: "the server is receiving too many request bodies at once; try again shortly" });
const TOO_MANY = refusal("too many open connections; try again shortly");
const TOO_MANY_FROM_IP = refusal("too many open connections from your address; close some and try again");

/**
 * With `fastLane`, HTTP/1.1 connections start in the fast lane (fastLane.ts) and move to node:http at the
 * first request it does not take.
 */
export async function listenDual(
  innerHandler: NodeHandlerFn,
  host: string,
  port: number,
  limits: ConnectionLimits,
  fastLane?: Omit<FastLaneOptions, "keepAliveTimeoutMs" | "requestTimeoutMs" | "headersTimeoutMs" | "budget">,
  /** HTTP/1.1 upgrades (WebSocket); without it node:http closes them. */
  upgrade?: (req: http.IncomingMessage, socket: import("node:stream").Duplex, head: Buffer) => void,
  observer: EdgeObserver = {},
): Promise<DualServer> {
  // Requests in flight on every path (fast lane, node:http, http2), for close() to wait on.
  let inFlight = 0;
  const budget = new BodyBudget({
    totalBytes: limits.bodyBudgetBytes,
    perIpBytes: limits.bodyBudgetPerIpBytes,
    perSessionBytes: limits.bodyBudgetPerSessionBytes,
    ...(limits.exempt ? { exempt: limits.exempt } : {}),
  });
  const handler: NodeHandlerFn = (req, res) => {
    // A declared body is held against the budget until the answer is done (node:http and h2; the fast lane
    // holds its own). One that does not fit is refused before a byte of it is read.
    const declared = Number(req.headers["content-length"]);
    // (One past any share is no body the routes read: theirs is a 413.)
    if (declared > 0 && declared <= limits.bodyBudgetPerIpBytes) {
      const ip = normalise(req.socket?.remoteAddress ?? "unknown");
      const session = "stream" in req ? req.stream.session : undefined;
      if (!budget.reserve(ip, declared, session)) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1", ...(req.httpVersionMajor === 1 ? { connection: "close" } : {}) });
        res.end(BODY_REFUSED);
        return;
      }
      res.once("close", () => budget.release(ip, declared, session));
      spillArriving(req, declared);
    } else if (!(declared >= 0) && req.method !== "GET" && req.method !== "HEAD") {
      budgetAsItArrives(req, res);
      spillArriving(req, 0);
    }
    inFlight++;
    res.once("close", () => inFlight--);
    return innerHandler(req, res);
  };
  /**
   * A body of no declared length (gRPC over HTTP/2, a chunked HTTP/1.1 body) is counted as it arrives: each
   * piece the stream takes in is held against the budget until the answer is done. Past the budget the stream
   * is reset (the connection, on HTTP/1.1): 100 streams a session of 1 MB bodies never finished were each held
   * whole, unbudgeted, for as long as the request timeout. Counted where the request takes its bytes in
   * (push), so whoever reads it, and whenever, reads it unchanged.
   */
  const budgetAsItArrives = (req: Parameters<NodeHandlerFn>[0], res: Parameters<NodeHandlerFn>[1]): void => {
    const ip = normalise(req.socket?.remoteAddress ?? "unknown");
    const session = "stream" in req ? req.stream.session : undefined;
    let held = 0;
    const push = req.push;
    req.push = function budgeted(this: typeof req, chunk: unknown, encoding?: BufferEncoding): boolean {
      if (chunk !== null && chunk !== undefined) {
        const n = typeof chunk === "string" ? Buffer.byteLength(chunk, encoding) : (chunk as Uint8Array).length;
        if (!budget.reserve(ip, n, session)) {
          req.push = push;
          if ("stream" in req) closeStream(req.stream, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
          else req.socket.destroy();
          return false;
        }
        held += n;
      }
      return push.call(this, chunk, encoding);
    } as typeof req.push;
    res.once("close", () => budget.release(ip, held, session));
  };
  const h1 = http.createServer({ connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs) }, handler as http.RequestListener);
  h1.keepAliveTimeout = limits.keepAliveTimeoutMs;
  h1.headersTimeout = limits.headersTimeoutMs;
  h1.requestTimeout = limits.requestTimeoutMs;
  // node:http enforces headersTimeout/requestTimeout from a timer it starts on "listening"; this server is
  // handed sockets and never listens itself, so without this a trickling client was never timed out.
  h1.emit("listening");
  if (upgrade) h1.on("upgrade", upgrade);
  const toH1 = (socket: net.Socket, unread: Buffer): void => {
    socket.pause();
    if (unread.length > 0) socket.unshift(unread);
    h1.emit("connection", socket);
    socket.resume();
  };
  const lane: FastLaneOptions | undefined = fastLane && {
    ...fastLane,
    handle: (input) => {
      const answer = fastLane.handle(input);
      // Only an answer still being worked on is in flight; one ready at once is written this turn.
      if (!(answer instanceof Promise)) return answer;
      inFlight++;
      // then(), not finally(): finally() costs two more promises and their microtasks per request.
      return answer.then(
        (a) => {
          inFlight--;
          return a;
        },
        (err: unknown) => {
          inFlight--;
          throw err;
        },
      );
    },
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    headersTimeoutMs: limits.headersTimeoutMs,
    requestTimeoutMs: limits.requestTimeoutMs,
    budget,
    ...(observer.bodyDroppedUnread ? { droppedUnread: observer.bodyDroppedUnread } : {}),
  };
  // Counted per client IP across its connections (reconnecting starts no fresh budget): streams the peer
  // reset before their answer began, and streams opened at all (a plain flood). Past either, every session of
  // the IP gets GOAWAY ENHANCE_YOUR_CALM and its new connections are closed at accept for a doubling back-off.
  const exempt = limits.exempt ? { exempt: limits.exempt } : {};
  const resets = new StreamResets({ ...H2_RESETS, ...exempt });
  const opened = new StreamResets({ ...H2_RESETS, budget: limits.h2StreamsPerIpPer10s, ...exempt });
  const bannedIp = (ip: string): boolean => resets.banned(ip) || opened.banned(ip);
  /** Open h2 sessions per client IP, to end them all when the IP passes a budget. */
  const sessionsOf = new Map<string, Set<http2.ServerHttp2Session>>();
  const ban = (ip: string, why: "resets" | "streams"): void => {
    observer.h2Banned?.(why);
    for (const session of sessionsOf.get(ip) ?? []) {
      if (session.destroyed || session.closed) continue;
      // destroy()'s own GOAWAY says NO_ERROR: the code is sent first, and the session ended once it is out.
      // (A session can be destroyed under us between the check and the call: that must not throw out of here.)
      try {
        session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      } catch {
        // already gone
      }
      setImmediate(() => session.destroy());
    }
  };
  /**
   * HTTP/2 answers are held until their stream closes: a peer that keeps its window shut (1 byte) holds every
   * answer it asked for in this process (+176 MB from 5 IPs in the attack run, on top of nghttp2's own 10 MB
   * per session). Each IP's answers not yet taken are counted across its sessions, as bodies are; a stream
   * whose answer would pass the share is reset ENHANCE_YOUR_CALM (counted). REST and Connect answers alike:
   * both write through the response.
   */
  const answers = new BodyBudget({ totalBytes: Number.MAX_SAFE_INTEGER, perIpBytes: limits.h2AnswerBytesPerIp, ...exempt });
  /** False when the stream was reset at once: its IP already holds its share, so it gets no work done. */
  const holdAnswers = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): boolean => {
    const ip = normalise(req.socket?.remoteAddress ?? "unknown");
    if (answers.full(ip)) {
      observer.h2AnswerRefused?.();
      closeStream(req.stream, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      return false;
    }
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
      observer.h2AnswerRefused?.();
      closeStream(req.stream, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      return false;
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
  /** Streams this server closed itself (timeouts, budgets): their reset is not the peer's. */
  const closedByUs = new WeakSet<http2.Http2Stream>();
  const closeStream = (stream: http2.Http2Stream, code: number): void => {
    closedByUs.add(stream);
    stream.close(code);
  };
  // At most this many streams at once per session (nginx allows 128, Go 250): each is a request in flight.
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: H2_MAX_STREAMS } }, (req, res) => {
    // The handler starts a turn later: a stream reset in the same read as its HEADERS (rapid reset) is closed
    // by then and costs no handler work.
    setImmediate(() => {
      if (req.stream.destroyed || req.stream.closed) return;
      // node:http bounds how long a request may take to arrive (requestTimeout); http2 only closes a stream
      // idle for the keep-alive timeout, so a body trickled a byte at a time was held without end. (A
      // bidirectional stream's request side, gRPC reflection's, is bounded alike.)
      const late = setTimeout(() => {
        if (!req.complete) closeStream(req.stream, http2.constants.NGHTTP2_CANCEL);
      }, limits.requestTimeoutMs);
      late.unref();
      req.once("end", () => clearTimeout(late));
      res.once("close", () => clearTimeout(late));
      if (holdAnswers(req, res)) handler(req, res);
    });
  });
  h2.on("session", (session) => {
    const ip = normalise(session.socket?.remoteAddress ?? "unknown");
    let mine = sessionsOf.get(ip);
    if (!mine) sessionsOf.set(ip, (mine = new Set()));
    mine.add(session);
    session.once("close", () => {
      mine.delete(session);
      if (mine.size === 0 && sessionsOf.get(ip) === mine) sessionsOf.delete(ip);
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
  // An h2 session with no frames for this long is closed (no listener for "timeout": http2 destroys it).
  h2.setTimeout(limits.keepAliveTimeoutMs);
  /**
   * Reads a new connection's first bytes and hands it to the protocol they say. Its own scope: nothing read
   * here is kept once the connection is handed on (a WebSocket lives for hours).
   */
  const dispatch = (socket: net.Socket): void => {
    // Until the first bytes say which protocol, nothing else times this socket out: silent or a partial
    // h2 preface, it is closed after the headers timeout.
    const silent = (): void => void socket.destroy();
    socket.setTimeout(limits.headersTimeoutMs, silent);
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && seen.length < H2_PREFACE.length) return; // need more bytes to decide
      socket.off("data", onData);
      socket.off("timeout", silent);
      socket.setTimeout(0);
      if (isH2) {
        socket.pause();
        socket.unshift(seen);
        // http2 drains the socket's buffered bytes itself on the next tick; resuming here would lose them.
        h2.emit("connection", socket);
      } else if (lane) serveFastLane(socket, seen, lane, (unread) => toH1(socket, unread));
      else toH1(socket, seen);
    };
    socket.on("data", onData);
  };
  const sockets = new Set<net.Socket>();
  const slots = new ConnectionSlots(limits.maxConnectionsPerIp, limits.exempt);
  const server = net.createServer((socket) => {
    destroyOnError(socket);
    const ip = normalise(socket.remoteAddress ?? "unknown");
    // An IP in its HTTP/2 back-off is closed at accept: not a byte read, no frame parsed.
    if (bannedIp(ip)) {
      observer.refusedAtAccept?.();
      return void socket.destroy();
    }
    if (sockets.size + (limits.heldElsewhere?.() ?? 0) >= limits.maxConnections) return void endAndClose(socket, TOO_MANY);
    if (!slots.take(ip)) return void endAndClose(socket, TOO_MANY_FROM_IP);
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      slots.give(ip);
    });
    dispatch(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    async close(graceMs = CLOSE_GRACE_MS) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = Date.now() + graceMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      // The fast lane writes its answers in the check phase (write batching): let the last ones go out.
      await new Promise((r) => setImmediate(r));
      resets.close();
      opened.close();
      h1.closeAllConnections();
      h1.close(); // stops its timeout checker
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
