// CORS for browser clients (Connect-Web, gRPC-Web, fetch to JSON-RPC/ZKT): credentials travel in the path or
// an authorization header, never in cookies, so any origin may call the API. Preflights are answered here.
// Minting a key is the exception (CorsPolicy).
import type { NodeHandlerFn } from "./nodeTypes.js";

const ALLOW_HEADERS = "content-type, authorization, idempotency-key, connect-protocol-version, connect-timeout-ms, grpc-timeout, x-grpc-web, x-user-agent";
const EXPOSE_HEADERS =
  "grpc-status, grpc-message, grpc-status-details-bin, retry-after, x-ratelimit-limit, " +
  "x-ratelimit-remaining, x-ratelimit-reset, x-request-id, idempotent-replayed";
const NONE: Record<string, string> = Object.freeze({}) as Record<string, string>;
const CORS: Record<string, string> = Object.freeze({ "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSE_HEADERS }) as Record<
  string,
  string
>;

/**
 * Which origins a route answers: every one (the API), or only those listed (POST /portal/keys mints a key from the
 * caller's IP and shows it: with "*" any web page could mint keys from its visitors' addresses and read them).
 */
export type CorsPolicy = "any" | ReadonlySet<string>;

/** The CORS headers of an answer to a request with this Origin header (none without one, or from an origin not listed). */
export function corsHeaders(origin: string | undefined, policy: CorsPolicy = "any"): Record<string, string> {
  if (origin === undefined) return NONE;
  if (policy === "any") return CORS;
  return policy.has(origin) ? { "access-control-allow-origin": origin, vary: "origin", "access-control-expose-headers": EXPOSE_HEADERS } : NONE;
}

/** `restricted`: paths whose answers (preflights included) name only their listed origins. */
export function withCors(handler: NodeHandlerFn, restricted: ReadonlyMap<string, ReadonlySet<string>> = new Map()): NodeHandlerFn {
  return (req, res) => {
    if (req.headers.origin === undefined) return handler(req, res);
    const only = restricted.size > 0 ? restricted.get((req.url ?? "/").split("?", 1)[0]!) : undefined;
    const headers = only ? corsHeaders(req.headers.origin, only) : CORS;
    if (headers === NONE) {
      // Another origin: no CORS headers at all, so the browser keeps the answer from the page.
      if (req.method === "OPTIONS") {
        res.writeHead(204);
        res.end();
        return;
      }
      return handler(req, res);
    }
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (req.method === "OPTIONS") {
      res.setHeader("access-control-allow-methods", "GET, POST, OPTIONS");
      res.setHeader("access-control-allow-headers", ALLOW_HEADERS);
      res.setHeader("access-control-max-age", "7200");
      res.writeHead(204);
      res.end();
      return;
    }
    handler(req, res);
  };
}
