// What the gateway and a fan-out shard (wsShard.ts) say to each other over the child process's IPC channel.
// The gateway decides (policy, JSON-RPC, which subscriptions exist); the shard owns sockets and carries out.
import type { FeedBlock } from "../../live/headFeed.js";
import type { LogLevel } from "../../log/logger.js";
import type { LogFilter } from "../../live/logFilter.js";
import type { SubscriptionKind } from "../../live/subscriptions.js";
import type { SlowShare, SocketLimits, UpgradeRequest } from "./socketHost.js";

/** Gateway → shard. "adopt" carries the socket as the message's handle. */
export type ToShard =
  | { t: "adopt"; sid: number; req: UpgradeRequest; head: string; ip?: string | undefined }
  | { t: "send"; sid: number; text?: string; release?: string[] }
  | { t: "subscribe"; sid: number; id: string; kind: SubscriptionKind; filter: LogFilter }
  | { t: "unsubscribe"; sid: number; id: string }
  | { t: "block"; block: FeedBlock }
  | { t: "removed"; block: FeedBlock }
  | { t: "pending"; hashes: string[] }
  | { t: "logLevel"; level: LogLevel }
  | { t: "close" };

/** Shard → gateway. */
export type FromShard =
  /** Loaded and listening: sockets are handed over from now on. */
  | { t: "ready" }
  | { t: "opened"; sid: number }
  | { t: "message"; sid: number; text: string }
  | { t: "closed"; sid: number }
  | { t: "slow"; share: SlowShare }
  | { t: "notified"; kind: SubscriptionKind; n: number }
  | { t: "closedAll" }
  /** A log line, written by the gateway's logger (one log, one format, one redaction). */
  | { t: "log"; level: "debug" | "info" | "warn" | "error"; msg: string; fields?: Record<string, unknown> };

/** The shard's settings, passed in its environment at start. */
export interface ShardSettings {
  limits: SocketLimits;
  logLevel: LogLevel;
  network: string;
}

export const SHARD_SETTINGS_ENV = "CHAIN_GATEWAY_SHARD";
