// Structured JSON logs (pino) behind a small interface. Secrets never reach them: paths are logged through
// redactPath, bodies and keys are never logged, and pino redacts any field named like a secret anyway.
import pino from "pino";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  /** Whether debug lines are written: lets a hot path skip building fields nobody will see. */
  readonly debugEnabled: boolean;
  /** Changes the level of this logger and every child made from its root (a reloaded configuration). */
  setLevel?(level: LogLevel): void;
}

const SECRET_FIELDS = ["apiKey", "key", "mnemonic", "privateKey", "seed", "authorization", "raw"];

/** A logger writing JSON lines to stderr, or to `write` (tests capture lines with it). */
export function createLogger(level: LogLevel, base: Record<string, unknown> = {}, write?: (line: string) => void): Logger {
  const destination = write ? { write } : pino.destination({ dest: 2, sync: true });
  const root = pino(
    {
      level,
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)], censor: "[REDACTED]" },
    },
    destination,
  );
  // Every logger made from this root, so that a new level reaches children made before it (pino's keep theirs);
  // children are made per network at start, not per request, so the list stays short.
  const family: { p: pino.Logger; w: { debugEnabled: boolean } }[] = [];
  const setLevel = (next: LogLevel): void => {
    for (const member of family) {
      member.p.level = next;
      member.w.debugEnabled = member.p.isLevelEnabled("debug");
    }
  };
  const wrap = (p: pino.Logger): Logger => {
    // Asked when the level is set, not on every request.
    const logger = {
      debug: (msg: string, fields?: Record<string, unknown>) => p.debug(fields ?? {}, msg),
      info: (msg: string, fields?: Record<string, unknown>) => p.info(fields ?? {}, msg),
      warn: (msg: string, fields?: Record<string, unknown>) => p.warn(fields ?? {}, msg),
      error: (msg: string, fields?: Record<string, unknown>) => p.error(fields ?? {}, msg),
      child: (fields: Record<string, unknown>) => wrap(p.child(fields)),
      debugEnabled: p.isLevelEnabled("debug"),
      setLevel,
    };
    family.push({ p, w: logger });
    return logger;
  };
  return wrap(root);
}

/** The segment after /zkt/ or /zgt/ (any case, any number of slashes) unless it names a public route. */
const KEY_ROUTE = /^(\/+(?:zkt|zgt)\/+)(?!(?:try-it-out|transactions|openapi\.json|docs)(?:[/?]|$))[^/?]+/i;
/** Anything shaped like a key elsewhere: our prefix, or a long run of base64url (a key pasted anywhere). */
const KEYISH = /cgw_[A-Za-z0-9_-]*|[A-Za-z0-9_-]{24,}/gi;
/** Queue ids are UUID-shaped and public: kept, so a status lookup can be followed in the logs. */
const QUEUE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A path (or query) fit for logs and error messages: the key segment of /zkt/<key> and /zgt/<key> paths, and
 * anything shaped like a key anywhere else (near misses such as /ZGT/<key>, /zkt//<key>,
 * /zkt/transactions/<key>), is replaced.
 */
export function redactPath(path: string): string {
  return path.replace(KEY_ROUTE, "$1[REDACTED]").replace(KEYISH, (m) => (QUEUE_ID.test(m) ? m : "[REDACTED]"));
}
