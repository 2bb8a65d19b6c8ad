// A fan-out shard as the endpoint sees it: a SocketHost whose sockets live in a child process (wsShard.ts).
// Writing one head to many thousands of sockets is more than one event loop does in time (bench/README.md,
// section 7): shards put those writes on other cores. The child is forked
// at its first socket; sockets are passed to it as handles, and it gets one copy of each block the network's
// feed delivers while it holds subscriptions that want it. Sockets wait in this process until the child says
// it is ready; one that never gets there (a missing bundle, a crash at start) gives them back to be placed
// elsewhere. If it dies, its sockets are reported closed (their clients reconnect), and after a pause that
// doubles while it keeps failing (1 s to a minute) the next socket placed here starts a new one.
import { type ChildProcess, fork } from "node:child_process";
import { Socket } from "node:net";
import type { FeedListener } from "../../live/headFeed.js";
import type { FeedSource, HubObserver, SubscriptionKind } from "../../live/subscriptions.js";
import type { Logger } from "../../log/logger.js";
import type { FromShard, ShardSettings, ToShard } from "./shardMessages.js";
import { SHARD_SETTINGS_ENV } from "./shardMessages.js";
import type { SocketEvents, SocketHost, UpgradeRequest } from "./socketHost.js";
import { DoublingDelay, type DoublingDelaySettings } from "../../resilience/doublingDelay.js";
import { workerEntry } from "../../workerEntry.js";

/** The shard's entry: beside the bundle (dist/wsShard.mjs), or from source under tsx (tests, `npm run dev`). */
const entry = () =>
  workerEntry(
    import.meta.url,
    "./wsShard",
    process.execArgv.filter((a) => a === "--enable-source-maps"),
  );

/** The variables of this process's environment that Node and the system read. */
function nodeEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (name.startsWith("NODE_") || ["PATH", "HOME", "TZ", "LANG", "TMPDIR"].includes(name))) env[name] = value;
  }
  return env;
}

export interface ShardHostOptions {
  settings: ShardSettings;
  /** The pause before a shard that died is started again, doubling while it keeps failing. */
  restart: DoublingDelaySettings;
  feed: FeedSource;
  observer?: HubObserver;
  log: Logger;
}

/** How long a shard may take to load before it is given up; and the pauses after a failure. */
const READY_TIMEOUT_MS = 10_000;
/** A shard that ran this long before it died was not failing at start: its next pause is the first again. */
const STEADY_MS = 60_000;

interface Waiting {
  sid: number;
  ip: string | undefined;
  req: UpgradeRequest;
  socket: Socket;
  head: Buffer;
}

export function shardHost(options: ShardHostOptions, events: SocketEvents): SocketHost {
  let child: ChildProcess | undefined;
  /** This shard's sockets and, per socket, its subscriptions' kinds (what the feed must send it). */
  const sockets = new Map<number, Map<string, SubscriptionKind>>();
  /** Sockets whose handle has left this process (counted against the port's connection cap from then). */
  const handedOver = new Set<number>();
  let closing: (() => void) | undefined;
  /** The child has loaded and listens; until then sockets wait here, still this process's. */
  let ready = false;
  const waiting: Waiting[] = [];
  /** No socket is placed here before this time (a shard that failed is given a pause, doubling while it fails). */
  let pausedUntil = 0;
  const pause = new DoublingDelay(options.restart);

  const tell = (m: ToShard, handle?: Socket): void => {
    if (child?.connected) child.send(m, handle);
  };
  const count = followFeed(options, tell);
  const forget = (sid: number): void => {
    const subs = sockets.get(sid);
    if (!subs) return;
    sockets.delete(sid);
    handedOver.delete(sid);
    for (const kind of subs.values()) count(kind, -1);
    events.closed(sid);
  };

  /** Hands a socket to the ready child: its handle leaves this process. */
  const handOver = (w: Waiting): void => {
    if (w.socket.destroyed) return forget(w.sid); // gone while it waited for the child
    handOverSocket(child!, w, (err) => {
      if (err) forget(w.sid);
      else if (sockets.has(w.sid)) handedOver.add(w.sid);
    });
  };

  /** Sockets still waiting were never the child's: they are placed again (or, shutting down, closed). */
  const giveBackWaiting = (): void => {
    for (const w of waiting.splice(0)) {
      sockets.delete(w.sid);
      if (events.unplaced && !closing && !w.socket.destroyed) events.unplaced(w.sid, w.req, w.socket, w.head);
      else {
        w.socket.destroy();
        events.closed(w.sid);
      }
    }
  };
  const onMessage = (c: ChildProcess, m: FromShard): void => {
    switch (m.t) {
      case "ready":
        ready = true;
        for (const w of waiting.splice(0)) handOver(w);
        return;
      case "opened":
        return events.opened(m.sid);
      case "message":
        return events.message(m.sid, m.text);
      case "closed":
        return forget(m.sid);
      case "slow":
        return events.slowConsumerClosed(m.share);
      case "notified":
        return options.observer?.notified(m.kind, m.n);
      case "closedAll":
        return closing?.();
      case "log":
        return options.log[m.level](m.msg, { ...m.fields, shard: c.pid });
    }
  };

  const start = (): ChildProcess => {
    const startedAt = Date.now();
    ready = false;
    const c = forkShard(options.settings);
    watchShard(c, options.log, onMessage, (code, signal) => {
      if (child === c) child = undefined;
      if (!closing) {
        // Failing again soon after a start doubles the pause; a shard that ran steadily starts the count over.
        if (Date.now() - startedAt >= STEADY_MS) pause.reset();
        const pauseMs = pause.next();
        pausedUntil = Date.now() + pauseMs;
        options.log.warn(ready ? "websocket shard exited; its sockets are closed" : "websocket shard failed to start; its sockets go elsewhere", {
          code,
          signal,
          retryInMs: pauseMs,
        });
      }
      giveBackWaiting();
      for (const sid of [...sockets.keys()]) forget(sid);
      closing?.();
    });
    return c;
  };

  return {
    get load() {
      return sockets.size;
    },
    get elsewhere() {
      return handedOver.size;
    },
    get available() {
      return Date.now() >= pausedUntil;
    },
    adopt(sid, req, socket, head, ip) {
      child ??= start();
      sockets.set(sid, new Map());
      if (!(socket instanceof Socket)) {
        socket.destroy();
        return forget(sid);
      }
      if (ready) handOver({ sid, ip, req, socket, head });
      else waiting.push({ sid, ip, req, socket, head });
    },
    setLogLevel(level) {
      // A shard started later starts at it too.
      options.settings.logLevel = level;
      tell({ t: "logLevel", level });
    },
    send: (sid, text, release) => tell({ t: "send", sid, text, release: release && release.length > 0 ? [...release] : undefined }),
    subscribe(sid, id, kind, filter) {
      const subs = sockets.get(sid);
      if (!subs) return;
      subs.set(id, kind);
      count(kind, 1);
      tell({ t: "subscribe", sid, id, kind, filter });
    },
    unsubscribe(sid, id) {
      const kind = sockets.get(sid)?.get(id);
      if (kind === undefined) return;
      sockets.get(sid)!.delete(id);
      count(kind, -1);
      tell({ t: "unsubscribe", sid, id });
    },
    async close() {
      const c = child;
      if (!c?.connected) return;
      await new Promise<void>((resolve) => {
        closing = resolve;
        c.send({ t: "close" } satisfies ToShard);
        setTimeout(() => c.kill(), 3_000).unref();
      });
      c.kill();
    },
  };
}

/** Forks a shard process with its settings and what Node itself reads, nothing else of this environment. */
function forkShard(settings: ShardSettings): ChildProcess {
  const { path, execArgv } = entry();
  return fork(path, [], {
    // A shard's garbage is the notifications it writes, dead once written: a small young generation keeps
    // its RSS near what it holds, with no slower fan-out (bench/README.md).
    execArgv: [...execArgv, "--max-semi-space-size=4"],
    // The gateway's environment holds secrets (MASTER_MNEMONIC, DATABASE_URL) a shard has no use for.
    env: { ...nodeEnvironment(), [SHARD_SETTINGS_ENV]: JSON.stringify(settings) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/**
 * Follows the feed exactly while a subscription on the shard wants it (an idle shard costs the feed nothing):
 * the count of subscriptions by kind. The gauge is kept here too, not by the shard's hub: a shard that dies
 * takes its own count with it.
 */
function followFeed(options: ShardHostOptions, tell: (m: ToShard) => void): (kind: SubscriptionKind, delta: number) => void {
  const wanted: Record<SubscriptionKind, number> = { newHeads: 0, logs: 0, newPendingTransactions: 0 };
  let following = false;
  const listener: FeedListener = {
    relay: true,
    get wantsLogs() {
      return wanted.logs > 0;
    },
    get wantsPending() {
      return wanted.newPendingTransactions > 0;
    },
    block: (block) => tell({ t: "block", block }),
    removed: (block) => tell({ t: "removed", block }),
    pending: (hashes) => tell({ t: "pending", hashes }),
  };
  return (kind, delta) => {
    wanted[kind] += delta;
    options.observer?.subscriptions(kind, delta);
    const want = wanted.newHeads + wanted.logs + wanted.newPendingTransactions > 0;
    if (want && !following) options.feed.add(listener);
    else if (!want && following) options.feed.remove(listener);
    following = want;
  };
}

/** Sends a waiting socket's handle to the child; `done` once the child has it (or failed to take it). */
function handOverSocket(child: ChildProcess, { sid, ip, req, socket, head }: Waiting, done: (err: Error | null) => void): void {
  // Bytes read after the upgrade request (a client that did not wait for the 101) go along with it.
  const early = socket.read() as Buffer | null;
  const bytes = early ? Buffer.concat([head, early]) : head;
  // This process keeps its copy of the descriptor until the child acknowledges it, and a copy that is still
  // read would take the client's first frames (sent on the shard's 101) and drop them. So reading stops here;
  // what arrives from now on waits in the kernel for the shard. (Node has no public call for it: the internal
  // readStop is what its maintainers point to, nodejs/node#8353.)
  (socket as unknown as { _handle?: { readStop?(): number } })._handle?.readStop?.();
  child.send({ t: "adopt", sid, req, head: bytes.toString("base64"), ip } satisfies ToShard, socket, (err) => {
    // The handle is the child's now; this process's copy is closed (so its connection count drops).
    socket.destroy();
    done(err);
  });
}

/** A forked shard's load deadline, its messages, and one `ended` however it stops (an exit, or no spawn at all). */
function watchShard(
  c: ChildProcess,
  log: Logger,
  onMessage: (c: ChildProcess, m: FromShard) => void,
  ended: (code: number | null, signal: NodeJS.Signals | null) => void,
): void {
  const loading = setTimeout(() => {
    log.warn("websocket shard did not start in time; stopping it", { ms: READY_TIMEOUT_MS });
    c.kill();
  }, READY_TIMEOUT_MS);
  loading.unref();
  c.on("message", (m: FromShard) => {
    if (m.t === "ready") clearTimeout(loading);
    onMessage(c, m);
  });
  let done = false;
  const end = (code: number | null, signal: NodeJS.Signals | null): void => {
    if (done) return;
    done = true;
    clearTimeout(loading);
    ended(code, signal);
  };
  c.on("exit", end);
  c.on("error", (err) => {
    log.warn("websocket shard error", { error: err.message });
    // A child that could not be spawned at all emits no exit.
    if (c.pid === undefined) end(null, null);
  });
}
