// Liveness and readiness. Readiness means "an upstream answered recently"; load balancers drain on false.
import type { UpstreamPool } from "../../chain/upstreamPool.js";
import { json, type RestRoute } from "./restRouter.js";

export function healthRoutes(pool: UpstreamPool, isDraining: () => boolean): RestRoute[] {
  const renderError = () => json(500, { status: "error" });
  return [
    { method: "GET", pattern: /^\/healthz$/, renderError, handle: async () => json(200, { status: "ok" }) },
    {
      method: "GET",
      pattern: /^\/readyz$/,
      renderError,
      handle: async () => {
        const ready = pool.ready && !isDraining();
        return json(ready ? 200 : 503, { status: ready ? "ready" : "not ready", draining: isDraining(), upstreams: pool.health() });
      },
    },
  ];
}
