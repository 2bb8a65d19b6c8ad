// CORS for browser clients (Connect-Web, gRPC-Web, fetch to JSON-RPC/ZKT): credentials travel in the path or
// an authorization header, never in cookies, so any origin may call. Preflights are answered here.
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

/** The CORS headers of an answer to a request with this Origin header (none without one). */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  return origin === undefined ? NONE : CORS;
}

export function withCors(handler: NodeHandlerFn): NodeHandlerFn {
  return (req, res) => {
    if (req.headers.origin === undefined) return handler(req, res);
    for (const [name, value] of Object.entries(CORS)) res.setHeader(name, value);
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
