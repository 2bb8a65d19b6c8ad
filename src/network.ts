// One network's runtime: its upstreams (or embedded anvil), its core, and its server on its own port.
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { NodeServerRequest } from "./transport/http/nodeTypes.js";
import type { GatewayConfig, NetworkConfig } from "./config/config.js";
import { startEmbeddedNode, type EmbeddedNode } from "./chain/embeddedNode.js";
import { UpstreamPool } from "./chain/upstreamPool.js";
import { RpcCore } from "./rpc/rpcCore.js";
import type { Logger } from "./log/logger.js";
import type { Access } from "./rpc/methodPolicy.js";
import { listenDual, type DualServer } from "./transport/http/listen.js";
import { createRestHandler } from "./transport/http/restRouter.js";
import { healthRoutes } from "./transport/http/healthRoutes.js";
import { jsonRpcRoutes, type Authenticate } from "./transport/jsonrpc/jsonRpcRoutes.js";
import { connectRoutes } from "./transport/connect/routes.js";
import { accessKey } from "./transport/connect/context.js";
import { errorMappingInterceptor } from "./transport/connect/errorMap.js";
import { createContextValues } from "@connectrpc/connect";

export interface RunningNetwork {
  config: NetworkConfig;
  /** Base address, e.g. http://127.0.0.1:8545 */
  url: string;
  /** The node(s) behind it; the embedded anvil's URL when there is one. */
  upstreamUrls: string[];
  core: RpcCore;
  pool: UpstreamPool;
  close(): Promise<void>;
}

export interface NetworkDeps {
  log: Logger;
  authenticate: Authenticate;
}

export async function startNetwork(gw: GatewayConfig, net: NetworkConfig, deps: NetworkDeps): Promise<RunningNetwork> {
  const log = deps.log.child({ network: net.name });
  let embedded: EmbeddedNode | undefined;
  let server: DualServer | undefined;
  let pool: UpstreamPool | undefined;
  try {
    if (net.upstreams.length === 0) {
      embedded = await startEmbeddedNode({ chainId: net.chainId, blockTimeSeconds: net.blockTimeSeconds, feeMode: net.feeMode });
      log.info("embedded anvil started", { chainId: net.chainId, blockTime: net.blockTimeSeconds, pid: embedded.pid });
    }
    const upstreamUrls = embedded ? [embedded.url] : net.upstreams;
    pool = new UpstreamPool({ urls: upstreamUrls, chainId: net.chainId, timeoutMs: gw.upstreamTimeoutMs, probeIntervalMs: gw.upstreamProbeIntervalMs, log });
    await pool.start();
    if (!pool.ready) log.warn("no upstream is reachable yet; serving anyway, readiness is false", { upstreams: pool.health() });
    const core = new RpcCore(pool, net.chainId);
    let draining = false;
    const rest = createRestHandler(
      [...healthRoutes(pool, () => draining), ...jsonRpcRoutes({ dispatcher: core, maxBatchSize: gw.maxBatchSize, authenticate: deps.authenticate })],
      gw.bodyLimitBytes,
      log,
    );
    const handler = connectNodeAdapter({
      routes: connectRoutes({ core, maxBatchSize: gw.maxBatchSize }),
      fallback: rest,
      readMaxBytes: gw.bodyLimitBytes,
      interceptors: [errorMappingInterceptor],
      contextValues: (req) => connectContext(req, deps.authenticate),
    });
    server = await listenDual(handler, gw.host, net.port);
    const url = `http://${gw.host}:${server.port}`;
    const srv = server;
    const p = pool;
    return {
      config: net,
      url,
      upstreamUrls,
      core,
      pool,
      async close() {
        draining = true;
        await srv.close();
        p.stop();
        await embedded?.stop();
      },
    };
  } catch (err) {
    await server?.close();
    pool?.stop();
    await embedded?.stop();
    throw err;
  }
}

function connectContext(_req: NodeServerRequest, _authenticate: Authenticate) {
  const values = createContextValues();
  const access: Access = { kind: "public" };
  values.set(accessKey, access);
  return values;
}
