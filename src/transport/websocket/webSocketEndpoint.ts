// JSON-RPC 2.0 over WebSocket on a network's port: GET / (public, read-only) and /zgt/<API_KEY> (the key's
// rights) upgraded with `ws`. Every message is a JSON-RPC request or batch, run exactly as over HTTP
// (handleJsonRpc onto the guarded RpcService handlers: a message counts as a request, a batch as its size),
// plus eth_subscribe/eth_unsubscribe on the network's SubscriptionHub (admitted as calls, answered here: a
// subscription belongs to its socket). Bounded everywhere: sockets per caller,
// subscriptions per socket, frame size, unsent bytes per socket (a slow consumer is closed, 1008), ping/pong
// keepalive and an idle timeout; shutdown closes every socket with 1001.
import type http from "node:http";
import type { Duplex } from "node:stream";
import { GatewayError, toGatewayError } from "../../errors.js";
import type { Logger, LogLevel } from "../../log/logger.js";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { Caller, EdgeAdmission } from "../../handlers/admission.js";
import type { SubscriptionHub } from "../../live/subscriptions.js";
import { handleJsonRpc } from "../jsonrpc/handleJsonRpc.js";
import { sizeWeight } from "../http/sizeWeight.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "../jsonrpc/errorMap.js";
import { clientIp, type ProxyMatcher } from "../http/clientIp.js";
import { endAndClose } from "../http/endAndClose.js";
import { SocketBudgets } from "./socketBudgets.js";
import { type Session, type SessionDeps, sessionHandlers } from "./socketSession.js";
import { type SlowShare, createSocketHost, type SocketEvents, type SocketHost, type SocketLimits } from "./socketHost.js";
import { destroyOnError } from "../http/destroyOnError.js";
import { callerContext, inSpan, SpanKind, tracingOn } from "../../trace/tracing.js";

export interface WebSocketLimits extends SocketLimits {
  maxSocketsPerCaller: number;
  maxSubscriptionsPerSocket: number;
  /**
   * Sockets and subscriptions per client IP, whatever keys they present: free keys are self-service, so 30 of
   * them from one IP held 39,000 subscriptions. A key with limits of its own (an operator raised it) is exempt.
   */
  maxSocketsPerIp: number;
  maxSubscriptionsPerIp: number;
}

export interface WebSocketObserver {
  sockets(delta: number): void;
  slowConsumerClosed(share: SlowShare): void;
}

export interface WebSocketEndpointOptions {
  /** The guarded RpcService handlers every call but eth_subscribe/eth_unsubscribe runs through. */
  rpc: ServiceImpl<typeof RpcService>;
  hub: SubscriptionHub;
  /** The edge's admission: an opening socket and its subscription calls are requests; refusals count. */
  admission: EdgeAdmission;
  maxBatchSize: number;
  /** A message counts one more request for each of these past the first (as an HTTP body; 0: off). */
  bodyBytesPerRequest: number;
  limits: WebSocketLimits;
  trustedProxies: ProxyMatcher;
  log: Logger;
  observer?: WebSocketObserver;
  /**
   * Fan-out shards: processes that own sockets past the first `socketsInProcess` (shardHost.ts), so one
   * head is written to many sockets on several cores. Absent: every socket stays in this process.
   */
  shards?: { hosts: (events: SocketEvents) => SocketHost[]; socketsInProcess: number };
}

export interface WebSocketEndpoint {
  /** node:http's "upgrade" listener. */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket with 1001 (after the HTTP drain). */
  close(): Promise<void>;
  /** Sockets handed to fan-out shards: connections of this port that this process no longer holds. */
  readonly onShards: number;
  /** A reloaded log level, for the fan-out shards' loggers. */
  setLogLevel(level: LogLevel): void;
}

/** The endpoint a path names: public, keyed (with its key), or none. */
function route(url: string | undefined): { apiKey?: string } | undefined {
  const path = (url ?? "/").split("?")[0]!;
  if (path === "/" || path === "/zgt" || path === "/zgt/") return {};
  const m = /^\/zgt\/([^/]+)\/?$/.exec(path);
  if (!m) return undefined;
  try {
    return { apiKey: decodeURIComponent(m[1]!) };
  } catch {
    return { apiKey: m[1]! };
  }
}

/** An HTTP answer to an upgrade we refuse, with the JSON-RPC error as its body. */
function refuse(socket: Duplex, status: number, err: GatewayError): void {
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: toJsonRpcError(err) });
  const retry = err.retryAfterSeconds !== undefined ? `retry-after: ${err.retryAfterSeconds}\r\n` : "";
  endAndClose(
    socket,
    `HTTP/1.1 ${status} ${status === 404 ? "Not Found" : "Refused"}\r\ncontent-type: ` +
      `application/json\r\n${retry}connection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export function webSocketEndpoint(options: WebSocketEndpointOptions): WebSocketEndpoint {
  const { limits } = options;
  const budgets = new SocketBudgets(limits);
  const sessionDeps: SessionDeps = { rpc: options.rpc, admission: options.admission, budgets, maxSubscriptionsPerSocket: limits.maxSubscriptionsPerSocket };
  const sessions = new Map<number, Session>();
  let nextSid = 1;
  let closing = false;

  const events: SocketEvents = {
    opened(sid) {
      const s = sessions.get(sid);
      if (!s) return;
      s.opened = true;
      options.observer?.sockets(1);
    },
    message: (sid, text) => {
      const s = sessions.get(sid);
      if (s) onMessage(s, text);
    },
    closed(sid) {
      const s = sessions.get(sid);
      if (!s) return;
      sessions.delete(sid);
      budgets.closed(s.who, s.ip, s.subscriptions.size);
      // A socket whose handshake failed was never counted open.
      if (s.opened) options.observer?.sockets(-1);
    },
    slowConsumerClosed: (share) => options.observer?.slowConsumerClosed(share),
    unplaced(sid, req, socket, head) {
      const s = sessions.get(sid);
      if (!s) return void socket.destroy();
      s.host = place();
      s.host.adopt(sid, req, socket, head, s.ip);
    },
  };
  const local = createSocketHost(options.hub, limits, events, options.log);
  const shards = options.shards?.hosts(events) ?? [];
  /**
   * This process until it holds `socketsInProcess`, then whichever host holds fewest, this process among them
   * (with 0 this process holds none: every socket is on a shard). A shard that failed is passed over for a
   * while; with none to take it, a socket stays here (slower fan-out, not a refused socket).
   */
  const inProcess = options.shards?.socketsInProcess ?? 0;
  const place = (): SocketHost => {
    if (shards.length === 0 || local.load < inProcess) return local;
    const open = shards.filter((h) => h.available);
    let best: SocketHost = inProcess > 0 || open.length === 0 ? local : open[0]!;
    for (const h of open) if (h.load < best.load) best = h;
    return best;
  };

  const fail = (s: Session, err: unknown): void =>
    s.host.send(s.sid, JSON.stringify({ jsonrpc: "2.0", id: null, error: toJsonRpcError(toGatewayError(err)) }), s.released.splice(0));
  // Traced, each message is a server span continuing the upgrade request's traceparent.
  const onMessage = (s: Session, text: string): void => {
    if (tracingOn) return inSpan("websocket message", SpanKind.SERVER, () => answerMessage(s, text), s.trace);
    answerMessage(s, text);
  };
  // A large message is charged by its size before it is parsed, as a large HTTP body is; refused, it is not parsed.
  const answerMessage = (s: Session, text: string): void => {
    const extra = sizeWeight(text.length, options.bodyBytesPerRequest);
    if (extra === 0) return answerParsed(s, text);
    Promise.resolve()
      .then(() => options.admission.calls(s.caller, extra))
      .then(
        () => answerParsed(s, text),
        (err: unknown) => fail(s, err),
      );
  };
  const answerParsed = (s: Session, text: string): void => {
    let answer: ReturnType<typeof handleJsonRpc>;
    try {
      // Made per message, as per HTTP request: kept on the session they would weigh on every idle subscriber.
      answer = handleJsonRpc(text, sessionHandlers(s, sessionDeps), options.maxBatchSize);
    } catch (err) {
      return fail(s, err);
    }
    Promise.resolve(answer).then(
      // A subscription's first notification goes after the answer that names it.
      // Every message ends in exactly one send (with no text for notifications): the host counts on it.
      (a) => s.host.send(s.sid, a.body, s.released.splice(0)),
      (err: unknown) => fail(s, err),
    );
  };

  return {
    upgrade(req, socket, head) {
      destroyOnError(socket);
      if (closing) return refuse(socket, 503, new GatewayError("upstream_unavailable", "the gateway is shutting down"));
      const target = route(req.url);
      const ip = clientIp(req.socket.remoteAddress, req.headers["x-forwarded-for"], options.trustedProxies);
      const refused = (err: unknown): void => {
        const e = toGatewayError(err);
        refuse(socket, httpStatusForJsonRpc(e) === 200 ? 400 : httpStatusForJsonRpc(e), e);
      };
      if (!target) {
        // A request to no endpoint counts like any other (a public request of its IP), then gets its 404.
        Promise.resolve()
          .then(() => options.admission.refused({ clientIp: ip }))
          .then(() => refuse(socket, 404, new GatewayError("not_found", "no WebSocket endpoint here: use / (public) or /zgt/<API_KEY>")), refused);
        return;
      }
      const caller: Caller = { apiKey: target.apiKey, clientIp: ip, transport: "websocket" };
      // Opening a socket is a request: the key is checked and it counts against the caller's limit.
      Promise.resolve()
        .then(() => options.admission.calls(caller))
        .then(({ access }) => {
          const who = caller.apiKey !== undefined ? `key:${caller.apiKey}` : `ip:${caller.clientIp}`;
          // A key an operator gave limits of its own is not held to its address's share; the public and free keys are.
          const raised = access.kind === "key" && (access.requestsPerMinute ?? null) !== null;
          const counted = raised || options.trustedProxies.has(ip) ? undefined : ip;
          const over = budgets.open(who, counted);
          if (over) return refuse(socket, 429, over);
          const host = place();
          const s: Session = {
            sid: nextSid++,
            host,
            caller,
            who,
            ip: counted,
            opened: false,
            subscriptions: new Set(),
            released: [],
            ...(tracingOn ? { trace: callerContext(req.headers) } : {}),
          };
          sessions.set(s.sid, s);
          host.adopt(s.sid, { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers }, socket, head, counted);
        }, refused);
    },
    async close() {
      closing = true;
      await Promise.all([local, ...shards].map((h) => h.close()));
    },
    setLogLevel(level) {
      for (const h of shards) h.setLogLevel?.(level);
    },
    get onShards() {
      let n = 0;
      for (const h of shards) n += h.elsewhere;
      return n;
    },
  };
}
