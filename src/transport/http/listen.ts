// One port, HTTP/1.1 and cleartext HTTP/2 (gRPC needs h2): Node refuses allowHTTP1 without TLS, so we read
// the first bytes of each connection and hand the socket to the http2 or http server accordingly.
import http from "node:http";
import net from "node:net";
import type { NodeHandlerFn } from "./nodeTypes.js";
import { serveFastLane, type FastLaneOptions } from "./fastLane.js";
import { destroyOnError } from "./destroyOnError.js";
import { endAndClose } from "./endAndClose.js";
import { normalise, type ProxyMatcher } from "./clientIp.js";
import { ConnectionSlots } from "./connectionSlots.js";
import { AcceptGate, type AcceptRefusal } from "./acceptGate.js";
import { BodyBudget } from "./bodyBudget.js";
import { type BodyRefused, budgetedHandler } from "./budgetedHandler.js";
import { CALM_GOAWAY, createH2Server } from "./h2Server.js";

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
  /** New connections per client IP per second past which the rest that second are refused (exempt: none). */
  newConnectionsPerIpPerSecond: number;
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
  /** HTTP/2 resets tolerated per IP and window, and the first ban (config resilience.h2Resets). */
  h2Resets?: { budget: number; windowMs: number; banMs: number };
}

/** What the edge refused, for metrics. */
export interface EdgeObserver {
  /** An IP passed an HTTP/2 budget (resets or streams): its sessions were ended, its new connections refused. */
  h2Banned?: (why: "resets" | "streams") => void;
  /**
   * A connection closed at accept, before a byte of it was read: its IP is in its HTTP/2 back-off, or past a
   * connection cap or its new connections per second, with this second's 503s already written.
   */
  refusedAtAccept?: (why: AcceptRefusal) => void;
  /** A large HTTP/1.1 body its route refused unread (fastLane.ts): dropped as it arrived, never decoded. */
  bodyDroppedUnread?: () => void;
  /** An HTTP/2 stream reset because its IP's answers not yet taken passed h2AnswerBytesPerIp. */
  h2AnswerRefused?: () => void;
  /** A request whose body had no room in the body budget (503, or its stream reset): a request of its caller. */
  bodyRefused?: BodyRefused;
}

/** Answer to a connection past a cap: plain HTTP/1.1, which is what nearly every client speaks first. */
const refusal = (error: string): string => {
  const body = JSON.stringify({ error });
  return (
    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n" +
    `connection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}`
  );
};
const TOO_MANY = refusal("too many open connections; try again shortly");
const TOO_MANY_FROM_IP = refusal("too many open connections from your address; close some and try again");
const TOO_FAST_FROM_IP = refusal("too many new connections from your address; keep connections alive and try again");

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
  const inFlight = { n: 0 };
  const budget = new BodyBudget({
    totalBytes: limits.bodyBudgetBytes,
    perIpBytes: limits.bodyBudgetPerIpBytes,
    perSessionBytes: limits.bodyBudgetPerSessionBytes,
    ...(limits.exempt ? { exempt: limits.exempt } : {}),
  });
  const handler = budgetedHandler(innerHandler, {
    budget,
    perIpBytes: limits.bodyBudgetPerIpBytes,
    closeStream: (stream, code) => h2.closeStream(stream, code),
    inFlight,
    ...(observer.bodyRefused ? { refused: observer.bodyRefused } : {}),
  });
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
      inFlight.n++;
      // then(), not finally(): finally() costs two more promises and their microtasks per request.
      return answer.then(
        (a) => {
          inFlight.n--;
          return a;
        },
        (err: unknown) => {
          inFlight.n--;
          throw err;
        },
      );
    },
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    headersTimeoutMs: limits.headersTimeoutMs,
    requestTimeoutMs: limits.requestTimeoutMs,
    budget,
    ...(observer.bodyDroppedUnread ? { droppedUnread: observer.bodyDroppedUnread } : {}),
    ...(observer.bodyRefused ? { bodyRefused: observer.bodyRefused } : {}),
  };
  const h2 = createH2Server(limits, handler, observer);
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
        h2.server.emit("connection", socket);
      } else if (lane) serveFastLane(socket, seen, lane, (unread) => toH1(socket, unread));
      else toH1(socket, seen);
    };
    socket.on("data", onData);
  };
  const sockets = new Set<net.Socket>();
  const slots = new ConnectionSlots(limits.maxConnectionsPerIp, limits.exempt);
  const portFull = (): boolean => sockets.size + (limits.heldElsewhere?.() ?? 0) >= limits.maxConnections;
  const gate = new AcceptGate({
    h2,
    slots,
    portFull,
    newConnectionsPerIpPerSecond: limits.newConnectionsPerIpPerSecond,
    exempt: limits.exempt,
    refused: observer.refusedAtAccept,
  });
  const server = net.createServer({ blockList: gate }, (socket) => {
    destroyOnError(socket);
    const ip = normalise(socket.remoteAddress ?? "unknown");
    if (h2.banned(ip)) {
      observer.refusedAtAccept?.("h2_backoff");
      // Written, then closed: an end alone waits on the peer, and a server closing waits on that.
      if (h2.noticeOwed(ip)) return void socket.end(CALM_GOAWAY, () => socket.destroy());
      return void socket.destroy();
    }
    if (gate.tooFast(ip)) return void endAndClose(socket, TOO_FAST_FROM_IP);
    if (portFull()) return void endAndClose(socket, TOO_MANY);
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
      while (inFlight.n > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      // The fast lane writes its answers in the check phase (write batching): let the last ones go out.
      await new Promise((r) => setImmediate(r));
      h2.close();
      h1.closeAllConnections();
      h1.close(); // stops its timeout checker
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
