// JSON-RPC 2.0 over WebSocket on a network's port: GET / (public, read-only) and /zgt/<API_KEY> (the key's
// rights) upgraded with `ws`. Every message is a JSON-RPC request or batch, run exactly as over HTTP
// (handleJsonRpc onto the guarded RpcService handlers: a message counts as a request, a batch as its size),
// plus eth_subscribe/eth_unsubscribe on the network's SubscriptionHub (admitted as calls, answered here: a
// subscription belongs to its socket). Bounded everywhere: sockets per caller,
// subscriptions per socket, frame size, unsent bytes per socket (a slow consumer is closed, 1008), ping/pong
// keepalive and an idle timeout; shutdown closes every socket with 1001.
import type http from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { GatewayError, type JsonValue, toGatewayError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import type { RpcOutcome } from "../../chain/upstreamReplies.js";
import type { CallContext, CoreCall } from "../../rpc/rpcCore.js";
import type { Caller, Policy } from "../../policy/policy.js";
import { parseLogFilter, type SubscriptionHub, type SubscriptionKind } from "../../live/subscriptions.js";
import { handleJsonRpc, type Handled, type ItemOutcome, type JsonRpcHandlers } from "../jsonrpc/handleJsonRpc.js";
import { jsonRpcViaHandlers } from "../jsonrpc/viaHandlers.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "../jsonrpc/errorMap.js";
import { clientIp } from "../http/clientIp.js";
import { writeTextFrame } from "./textFrame.js";

export interface WebSocketLimits {
  maxSocketsPerCaller: number;
  maxSubscriptionsPerSocket: number;
  /** Unsent bytes a socket may hold; past it the consumer is too slow and is closed (1008). */
  maxBufferedBytes: number;
  /** A ping this often; a socket that did not answer the previous one is dropped. */
  pingIntervalMs: number;
  /** A socket with no subscription and no message for this long is closed (1000). */
  idleTimeoutMs: number;
  /** Largest frame (message) accepted; a bigger one closes the socket (1009). */
  maxPayloadBytes: number;
}

export interface WebSocketObserver {
  sockets(delta: number): void;
  slowConsumerClosed(): void;
}

export interface WebSocketEndpointOptions {
  /** The guarded RpcService handlers every call but eth_subscribe/eth_unsubscribe runs through. */
  rpc: ServiceImpl<typeof RpcService>;
  hub: SubscriptionHub;
  policy: Policy;
  maxBatchSize: number;
  limits: WebSocketLimits;
  trustedProxies: ReadonlySet<string>;
  log: Logger;
  observer?: WebSocketObserver;
}

export interface WebSocketEndpoint {
  /** node:http's "upgrade" listener. */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket with 1001 (after the HTTP drain). */
  close(): Promise<void>;
}

const KINDS: ReadonlySet<string> = new Set<SubscriptionKind>(["newHeads", "logs", "newPendingTransactions"]);
const isSubscriptionCall = (c: CoreCall): boolean => c.method === "eth_subscribe" || c.method === "eth_unsubscribe";

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
  socket.end(
    `HTTP/1.1 ${status} ${status === 404 ? "Not Found" : "Refused"}\r\ncontent-type: ` +
      `application/json\r\n${retry}connection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export function webSocketEndpoint(options: WebSocketEndpointOptions): WebSocketEndpoint {
  const { limits, hub, policy, log } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayloadBytes, perMessageDeflate: false, clientTracking: true });
  /** Open sockets per caller (the key as presented, else the IP). */
  const perCaller = new Map<string, number>();
  let closing = false;

  /** `socket` is the upgraded connection under `ws`: text messages are written to it as whole frames (writeTextFrame). */
  const session = (ws: WebSocket, socket: Duplex, caller: Caller, who: string): void => {
    options.observer?.sockets(1);
    const subscriptions = new Set<string>();
    let answeredPing = true;
    let lastActivity = Date.now();
    let slow = false;

    const send = (text: string): void => {
      if (slow || ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > limits.maxBufferedBytes) {
        // Never unbounded memory: a consumer that does not read is told why and let go.
        slow = true;
        options.observer?.slowConsumerClosed();
        ws.close(1008, `slow consumer: more than ${limits.maxBufferedBytes} bytes unsent`);
        setTimeout(() => ws.terminate(), 5_000).unref();
        return;
      }
      // In order with ws's own frames (pings, the close): with compression off, ws writes each at once too.
      writeTextFrame(socket, text);
    };

    const subscribe = (ctx: CallContext, params: JsonValue[]): string => {
      const kind = params[0];
      if (typeof kind !== "string" || !KINDS.has(kind)) {
        throw new GatewayError(
          "invalid_params",
          `Invalid params: unsupported subscription type ${JSON.stringify(kind)} (newHeads, logs, newPendingTransactions)`,
        );
      }
      if (kind === "newPendingTransactions" && ctx.access.kind === "public") {
        throw new GatewayError("unauthorized", "newPendingTransactions needs an API key: subscribe on /zgt/<API_KEY>");
      }
      if (kind !== "logs" && params.length > 1 && params[1] !== null && kind !== "newHeads")
        throw new GatewayError("invalid_params", `Invalid params: ${kind} takes no filter`);
      const filter = kind === "logs" ? parseLogFilter(params[1]) : {};
      if (subscriptions.size >= limits.maxSubscriptionsPerSocket) {
        throw new GatewayError("rate_limited", `limit exceeded: at most ${limits.maxSubscriptionsPerSocket} subscriptions per socket`);
      }
      const id = hub.subscribe(kind as SubscriptionKind, filter, send);
      subscriptions.add(id);
      return id;
    };

    /** The core's calls, with eth_subscribe/eth_unsubscribe answered here (they belong to this socket). */
    const released: string[] = [];
    const local = (ctx: CallContext, call: CoreCall): RpcOutcome => {
      try {
        const params = Array.isArray(call.params) ? (call.params as JsonValue[]) : [];
        if (call.method === "eth_subscribe") {
          const id = subscribe(ctx, params);
          released.push(id);
          return { ok: true, result: id };
        }
        const id = params[0];
        if (typeof id !== "string" || params.length !== 1)
          throw new GatewayError("invalid_params", "Invalid params: eth_unsubscribe takes one subscription id");
        const mine = subscriptions.delete(id);
        return { ok: true, result: mine && hub.unsubscribe(id) };
      } catch (err) {
        return { ok: false, error: toGatewayError(err) };
      }
    };
    /** eth_subscribe/eth_unsubscribe calls: admitted as calls (Policy), answered on this socket. */
    const subscriptionCalls = async (calls: CoreCall[]): Promise<Handled<RpcOutcome[]>> => {
      try {
        const admission = await policy.admit("RpcService.Call", caller, calls.length);
        return { outcome: { ok: true, value: calls.map((c) => local({ access: admission.access }, c)) }, headers: admission.headers };
      } catch (err) {
        return { outcome: { ok: false, error: toGatewayError(err) }, headers: {} };
      }
    };
    const item = (o: RpcOutcome): ItemOutcome => (o.ok ? { ok: true, json: JSON.stringify(o.result) } : { ok: false, error: toJsonRpcError(o.error) });
    const viaRpc = jsonRpcViaHandlers(options.rpc, caller, caller.apiKey === undefined ? "/" : "/zgt/{key}", (c, weight) => policy.admitUnhandled(c, weight));
    const handlers: JsonRpcHandlers = {
      malformed: viaRpc.malformed,
      async call(call) {
        if (!isSubscriptionCall(call)) return viaRpc.call(call);
        const { outcome, headers } = await subscriptionCalls([call]);
        if (!outcome.ok) return { outcome, headers };
        const o = outcome.value[0]!;
        return { outcome: o.ok ? { ok: true, value: JSON.stringify(o.result) } : o, headers };
      },
      async batch(calls) {
        if (!calls.some(isSubscriptionCall)) return viaRpc.batch(calls);
        const others = calls.filter((c) => !isSubscriptionCall(c));
        const [mine, theirs] = await Promise.all([
          subscriptionCalls(calls.filter(isSubscriptionCall)),
          others.length > 0 ? viaRpc.batch(others) : { outcome: { ok: true as const, value: [] as ItemOutcome[] }, headers: {} },
        ]);
        if (!mine.outcome.ok) return { outcome: mine.outcome, headers: mine.headers };
        if (!theirs.outcome.ok) return theirs;
        const own = mine.outcome.value;
        const rest = theirs.outcome.value;
        let i = 0;
        let j = 0;
        return { outcome: { ok: true, value: calls.map((c) => (isSubscriptionCall(c) ? item(own[i++]!) : rest[j++]!)) }, headers: theirs.headers };
      },
    };

    ws.on("message", (data, isBinary) => {
      lastActivity = Date.now();
      const text = isBinary ? Buffer.from(data as Buffer).toString("utf8") : String(data);
      let answer: ReturnType<typeof handleJsonRpc>;
      try {
        answer = handleJsonRpc(text, handlers, options.maxBatchSize);
      } catch (err) {
        send(JSON.stringify({ jsonrpc: "2.0", id: null, error: toJsonRpcError(toGatewayError(err)) }));
        return;
      }
      Promise.resolve(answer).then(
        (a) => {
          if (a.body !== undefined) send(a.body);
          // A subscription's first notification goes after the answer that names it.
          for (const id of released.splice(0)) hub.release(id);
        },
        (err: unknown) => send(JSON.stringify({ jsonrpc: "2.0", id: null, error: toJsonRpcError(toGatewayError(err)) })),
      );
    });
    ws.on("pong", () => {
      answeredPing = true;
    });
    const keepalive = setInterval(() => {
      if (!answeredPing) return void ws.terminate();
      if (subscriptions.size === 0 && Date.now() - lastActivity > limits.idleTimeoutMs) return void ws.close(1000, "idle");
      answeredPing = false;
      ws.ping();
    }, limits.pingIntervalMs);
    keepalive.unref();
    ws.on("error", (err) => log.debug("websocket error", { error: err.message }));
    ws.on("close", () => {
      clearInterval(keepalive);
      for (const id of subscriptions) hub.unsubscribe(id);
      subscriptions.clear();
      const n = (perCaller.get(who) ?? 1) - 1;
      if (n <= 0) perCaller.delete(who);
      else perCaller.set(who, n);
      options.observer?.sockets(-1);
    });
  };

  return {
    upgrade(req, socket, head) {
      socket.on("error", () => socket.destroy());
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
          .then(() => policy.admitUnhandled({ clientIp: ip }))
          .then(() => refuse(socket, 404, new GatewayError("not_found", "no WebSocket endpoint here: use / (public) or /zgt/<API_KEY>")), refused);
        return;
      }
      const caller: Caller = { apiKey: target.apiKey, clientIp: ip };
      // Opening a socket is a request: the key is checked and it counts against the caller's limit.
      Promise.resolve()
        .then(() => policy.admit("RpcService.Call", caller, 1))
        .then(() => {
          const who = caller.apiKey !== undefined ? `key:${caller.apiKey}` : `ip:${caller.clientIp}`;
          const open = perCaller.get(who) ?? 0;
          if (open >= limits.maxSocketsPerCaller) {
            return refuse(socket, 429, new GatewayError("rate_limited", `limit exceeded: at most ${limits.maxSocketsPerCaller} open WebSockets per caller`));
          }
          // Counted once the handshake is through (a bad handshake is answered 400 by ws and never opens).
          wss.handleUpgrade(req, socket, head, (ws) => {
            perCaller.set(who, (perCaller.get(who) ?? 0) + 1);
            session(ws, socket, caller, who);
          });
        }, refused);
    },
    async close() {
      closing = true;
      const open = [...wss.clients];
      for (const ws of open) ws.close(1001, "the gateway is shutting down");
      const deadline = Date.now() + 1_000;
      while ([...wss.clients].some((ws) => ws.readyState !== ws.CLOSED) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
