// Liveness and readiness. Readiness means "an upstream answered recently and the store takes writes"; load
// balancers drain on false.
import type { UpstreamPool } from "../../chain/upstreamPool.js";
import type { StoreHealth } from "../../store/storeHealth.js";
import { json, type RestRoute } from "./restRouter.js";

export function healthRoutes(pool: UpstreamPool, store: StoreHealth, isDraining: () => boolean): RestRoute[] {
  const renderError = () => json(500, { status: "error" });
  return [
    { method: "GET", pattern: /^\/healthz$/, renderError, handle: async () => json(200, { status: "ok" }) },
    {
      method: "GET",
      pattern: /^\/readyz$/,
      renderError,
      handle: async () => {
        const ready = pool.ready && store.available && !isDraining();
        return json(ready ? 200 : 503, {
          status: ready ? "ready" : "not ready",
          draining: isDraining(),
          store: store.available ? "available" : `unavailable: ${store.reason}`,
          upstreams: pool.health(),
        });
      },
    },
  ];
}
