// The part of a WebSocket that lives where its socket lives: the handshake (ws), frames in and out, ping/pong
// keepalive, the idle timeout, the slow-consumer bound, and the socket's subscriptions on a SubscriptionHub.
// What a message means (policy, JSON-RPC, which subscriptions a caller may hold) is decided by the endpoint
// (webSocketEndpoint.ts), which reaches a host either in its own process or in a fan-out shard (shardHost.ts):
// a host only carries out what it is told, so both places run this same code.
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { Logger, LogLevel } from "../../log/logger.js";
import type { LogFilter } from "../../live/logFilter.js";
import type { SubscriptionHub, SubscriptionKind } from "../../live/subscriptions.js";
import { type FrameWriter, frameWriter } from "./textFrame.js";
import { destroyOnError } from "../http/destroyOnError.js";

export interface SocketLimits {
  /**
   * Unsent bytes a socket may hold; past it the consumer is too slow and is closed (1008). Also the bytes of
   * a socket's messages still being answered: past it the socket is not read until answers go out.
   */
  maxBufferedBytes: number;
  /**
   * Unsent bytes one client address's sockets may hold together on this host (its sockets on other hosts,
   * fan-out shards, hold their own share); past it its slowest socket is closed (1008) as a slow consumer.
   */
  maxBufferedBytesPerIp: number;
  /** A ping this often; a socket that did not answer the previous one is dropped. */
  pingIntervalMs: number;
  /** A socket with no subscription and no message for this long is closed (1000). */
  idleTimeoutMs: number;
  /** Largest frame (message) accepted; a bigger one closes the socket (1009). */
  maxPayloadBytes: number;
}

export type SlowShare = "socket" | "address";

/** What a host reports back to the endpoint, per socket id (sid, the endpoint's). */
export interface SocketEvents {
  /** The handshake went through. */
  opened(sid: number): void;
  message(sid: number, text: string): void;
  /** Gone (closed, dropped, or a handshake that failed); its subscriptions are already ended. */
  closed(sid: number): void;
  /** A socket closed as too slow a reader: past its own bound, or its address's share. */
  slowConsumerClosed(share: SlowShare): void;
  /**
   * The host could not take a socket it was given after all (its shard process did not start): the endpoint
   * places it again. Nothing of it had started (no handshake, no message), and it was not counted closed.
   */
  unplaced?(sid: number, req: UpgradeRequest, socket: Duplex, head: Buffer): void;
}

/** The upgrade request as ws reads it (an IncomingMessage, or its fields sent to a shard). */
export interface UpgradeRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface SocketHost {
  /** Open sockets here, handshakes under way included: where the next socket goes. */
  readonly load: number;
  /** Of those, the sockets another process holds (a shard's, once handed over): 0 for this process's. */
  readonly elsewhere: number;
  /** Whether a new socket may be placed here (false while a shard that failed is given time). */
  readonly available: boolean;
  /** Completes the handshake on `socket` and runs it as `sid`; `ip` when its unsent bytes count per address. */
  adopt(sid: number, req: UpgradeRequest, socket: Duplex, head: Buffer, ip?: string): void;
  /**
   * Ends one message of `sid` (called once for each `message` event): writes its answer `text` if there is one,
   * then sends what `release`'s new subscriptions held (their answer came first).
   */
  send(sid: number, text: string | undefined, release?: readonly string[]): void;
  /** Starts subscription `id` on `sid`; its notifications are held until released by a send. */
  subscribe(sid: number, id: string, kind: SubscriptionKind, filter: LogFilter): void;
  unsubscribe(sid: number, id: string): void;
  /** Closes every socket with 1001, waits up to a second for the close handshakes, then drops the rest. */
  close(): Promise<void>;
  /** A reloaded log level, for a host in another process (this process's loggers follow the root's). */
  setLogLevel?(level: LogLevel): void;
}

/** A socket past this many unsent bytes has its address's sockets summed (below it, none is looked at). */
const PER_IP_CHECK_BYTES = 64 * 1024;

interface Session {
  ws?: WebSocket;
  /** Its client address, when its unsent bytes count against the address's share. */
  ip: string | undefined;
  socket: Duplex;
  out: FrameWriter;
  subscriptions: Set<string>;
  slow: boolean;
  /** Lengths of the messages being answered, oldest first (answers are matched to them in order). */
  unanswered: number[];
  unansweredBytes: number;
  paused: boolean;
}

export function createSocketHost(hub: SubscriptionHub, limits: SocketLimits, events: SocketEvents, log: Logger): SocketHost {
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayloadBytes, perMessageDeflate: false, clientTracking: true });
  const sessions = new Map<number, Session>();
  /** Sessions by client address (those counted per address). */
  const byIp = new Map<string, Set<Session>>();

  /** Never unbounded memory: a consumer that does not read is told why and let go. */
  const closeSlow = (s: Session, share: SlowShare, why: string): void => {
    s.slow = true;
    events.slowConsumerClosed(share);
    s.ws?.close(1008, why);
    const ws = s.ws;
    setTimeout(() => ws?.terminate(), 5_000).unref();
  };
  /**
   * Whether `s`'s address holds more unsent bytes on this host than its share: then its slowest socket is
   * closed (perhaps `s`). Summed only for a socket with a backlog, so sockets that keep up cost nothing here.
   */
  const overAddressShare = (s: Session): boolean => {
    const mine = s.ip === undefined ? undefined : byIp.get(s.ip);
    if (!mine || s.socket.writableLength < PER_IP_CHECK_BYTES) return false;
    let total = 0;
    let slowest = s;
    for (const o of mine) {
      if (o.slow) continue;
      total += o.socket.writableLength;
      if (o.socket.writableLength > slowest.socket.writableLength) slowest = o;
    }
    if (total <= limits.maxBufferedBytesPerIp) return false;
    closeSlow(slowest, "address", `slow consumer: this address's sockets hold more than ${limits.maxBufferedBytesPerIp} bytes unsent`);
    return slowest === s;
  };

  /** Whether `s` may be written to now: open, and not a consumer too slow to keep (closed here if it is). */
  const writable = (s: Session): boolean => {
    const ws = s.ws;
    if (s.slow || !ws || ws.readyState !== ws.OPEN) return false;
    // What waits in the socket's stream: ws's bufferedAmount, which adds only a compressor's queue (off here).
    if (s.socket.writableLength > limits.maxBufferedBytes) {
      closeSlow(s, "socket", `slow consumer: more than ${limits.maxBufferedBytes} bytes unsent`);
      return false;
    }
    return !overAddressShare(s);
  };

  const run = (sid: number, s: Session, ws: WebSocket): void => {
    s.ws = ws;
    let answeredPing = true;
    let lastActivity = Date.now();
    events.opened(sid);
    ws.on("message", (data, isBinary) => {
      lastActivity = Date.now();
      const text = isBinary ? Buffer.from(data as Buffer).toString("utf8") : String(data);
      // A client that sends faster than its messages are answered is not read meanwhile: what waits is
      // bounded here (and, on a shard, in the IPC queue to the gateway), never the whole of what it sends.
      s.unanswered.push(text.length);
      s.unansweredBytes += text.length;
      if (s.unansweredBytes > limits.maxBufferedBytes && !s.paused) {
        s.paused = true;
        ws.pause();
      }
      events.message(sid, text);
    });
    ws.on("pong", () => {
      answeredPing = true;
    });
    const keepalive = setInterval(() => {
      if (!answeredPing) return void ws.terminate();
      if (s.subscriptions.size === 0 && Date.now() - lastActivity > limits.idleTimeoutMs) return void ws.close(1000, "idle");
      answeredPing = false;
      ws.ping();
    }, limits.pingIntervalMs);
    keepalive.unref();
    ws.on("error", (err) => log.debug("websocket error", { error: err.message }));
    ws.on("close", () => clearInterval(keepalive));
  };

  return {
    get load() {
      return sessions.size;
    },
    elsewhere: 0,
    available: true,
    adopt(sid, req, socket, head, ip) {
      const s: Session = { ip, socket, out: frameWriter(socket), subscriptions: new Set(), slow: false, unanswered: [], unansweredBytes: 0, paused: false };
      sessions.set(sid, s);
      if (ip !== undefined) {
        let mine = byIp.get(ip);
        if (!mine) byIp.set(ip, (mine = new Set()));
        mine.add(s);
      }
      // One end for every way a socket goes: a failed handshake (ws destroys it), a close, a drop.
      socket.once("close", () => {
        sessions.delete(sid);
        const mine = ip === undefined ? undefined : byIp.get(ip);
        if (mine?.delete(s) && mine.size === 0) byIp.delete(ip!);
        for (const id of s.subscriptions) hub.unsubscribe(id);
        s.subscriptions.clear();
        events.closed(sid);
      });
      destroyOnError(socket);
      wss.handleUpgrade(req as Parameters<WebSocketServer["handleUpgrade"]>[0], socket, head, (ws) => run(sid, s, ws));
    },
    send(sid, text, release) {
      const s = sessions.get(sid);
      if (!s) return;
      s.unansweredBytes -= s.unanswered.shift() ?? 0;
      if (s.paused && s.unansweredBytes <= limits.maxBufferedBytes) {
        s.paused = false;
        s.ws?.resume();
      }
      if (text !== undefined && writable(s)) s.out.text(text);
      for (const id of release ?? []) hub.release(id);
    },
    subscribe(sid, id, kind, filter) {
      const s = sessions.get(sid);
      if (!s) return;
      s.subscriptions.add(id);
      hub.subscribe(
        kind,
        filter,
        (result) => {
          if (writable(s)) s.out.notification(id, result);
        },
        id,
      );
    },
    unsubscribe(sid, id) {
      const s = sessions.get(sid);
      if (s?.subscriptions.delete(id)) hub.unsubscribe(id);
    },
    async close() {
      for (const ws of wss.clients) ws.close(1001, "the gateway is shutting down");
      const deadline = Date.now() + 1_000;
      while ([...wss.clients].some((ws) => ws.readyState !== ws.CLOSED) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const ws of wss.clients) ws.terminate();
      for (const s of sessions.values()) s.socket.destroy();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
