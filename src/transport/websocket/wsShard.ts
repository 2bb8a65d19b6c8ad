// A fan-out shard's process (forked by shardHost.ts; bundled as dist/wsShard.mjs): it owns the sockets the
// gateway hands it and writes each block to their subscriptions, on its own core. Everything it does is what
// the gateway's messages say; what its sockets say goes back to the gateway to decide.
import type { Socket } from "node:net";
import type { FeedListener } from "../../live/headFeed.js";
import { type FeedSource, SubscriptionHub } from "../../live/subscriptions.js";
import type { Logger } from "../../log/logger.js";
import { createSocketHost } from "./socketHost.js";
import { type FromShard, SHARD_SETTINGS_ENV, type ShardSettings, type ToShard } from "./shardMessages.js";

const settings = JSON.parse(process.env[SHARD_SETTINGS_ENV] ?? "null") as ShardSettings | null;
if (!settings || !process.send) throw new Error("wsShard runs as a child of the gateway (shardHost.ts)");

const tell = (m: FromShard): void => {
  if (process.connected) process.send!(m);
};

/** Lines go to the gateway's logger; a shard loads no logger of its own (memory per shard). */
const levels = ["debug", "info", "warn", "error"] as const;
const levelIndex = (level: ShardSettings["logLevel"]): number => (level === "silent" ? 4 : levels.indexOf(level));
/** The least level sent; the gateway changes it on a reload ("logLevel"). */
let shown = levelIndex(settings.logLevel);
const ipcLogger = (base: Record<string, unknown>): Logger => {
  const line =
    (level: (typeof levels)[number]) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      if (levels.indexOf(level) >= shown) tell({ t: "log", level, msg, fields: { ...base, ...fields } });
    };
  return {
    debug: line("debug"),
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    child: (fields) => ipcLogger({ ...base, ...fields }),
    get debugEnabled() {
      return shown === 0;
    },
  };
};
const log = ipcLogger({});

/** The gateway's feed, relayed: it sends blocks only while this shard holds subscriptions that want them. */
const listeners = new Set<FeedListener>();
const relay: FeedSource = { add: (l) => listeners.add(l), remove: (l) => listeners.delete(l) };
// Subscriptions are counted by the gateway (shardHost.ts), which outlives a shard; notifications here.
const hub = new SubscriptionHub(relay, {
  subscriptions: () => undefined,
  notified: (kind, n) => n > 0 && tell({ t: "notified", kind, n }),
});
const host = createSocketHost(
  hub,
  settings.limits,
  {
    opened: (sid) => tell({ t: "opened", sid }),
    message: (sid, text) => tell({ t: "message", sid, text }),
    closed: (sid) => tell({ t: "closed", sid }),
    slowConsumerClosed: (share) => tell({ t: "slow", share }),
  },
  log,
);

process.on("message", (m: ToShard, handle?: Socket) => {
  switch (m.t) {
    case "adopt":
      if (handle) host.adopt(m.sid, m.req, handle, Buffer.from(m.head, "base64"), m.ip);
      return;
    case "send":
      return host.send(m.sid, m.text, m.release);
    case "logLevel":
      shown = levelIndex(m.level);
      log.debug("websocket shard log level changed", { level: m.level });
      return;
    case "subscribe":
      return host.subscribe(m.sid, m.id, m.kind, m.filter);
    case "unsubscribe":
      return host.unsubscribe(m.sid, m.id);
    case "block":
      for (const l of listeners) l.block?.(m.block);
      return;
    case "removed":
      for (const l of listeners) l.removed?.(m.block);
      return;
    case "pending":
      for (const l of listeners) l.pending?.(m.hashes);
      return;
    case "close":
      void host.close().then(() => {
        tell({ t: "closedAll" });
        process.disconnect();
      });
      return;
  }
});
// The gateway gone (crashed, killed): its sockets' policy is gone with it.
process.on("disconnect", () => process.exit(0));
tell({ t: "ready" });
