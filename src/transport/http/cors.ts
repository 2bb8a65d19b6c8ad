// CORS for browser clients (Connect-Web, gRPC-Web, fetch to JSON-RPC/ZKT): credentials travel in the path or
// an authorization header, never in cookies, so any origin may call. Preflights are answered here.
import type { NodeHandlerFn } from "./nodeTypes.js";

const ALLOW_HEADERS = "content-type, authorization, idempotency-key, connect-protocol-version, connect-timeout-ms, grpc-timeout, x-grpc-web, x-user-agent";
const EXPOSE_HEADERS = "grpc-status, grpc-message, grpc-status-details-bin, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, x-request-id, idempotent-replayed";

export function withCors(handler: NodeHandlerFn): NodeHandlerFn {
  return (req, res) => {
    if (req.headers.origin === undefined) return handler(req, res);
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-expose-headers", EXPOSE_HEADERS);
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
