// The whole gateway: every configured network, started together and stopped together.
import type { GatewayConfig } from "./config/config.js";
import { createLogger, type Logger } from "./log/logger.js";
import { startNetwork, type RunningNetwork } from "./network.js";
import type { Authenticate } from "./transport/jsonrpc/jsonRpcRoutes.js";

export interface Gateway {
  networks: RunningNetwork[];
  network(name: string): RunningNetwork;
  close(): Promise<void>;
}

export interface GatewayDeps {
  log?: Logger;
}

// Until API keys exist every key path behaves as the public one.
const publicOnly: Authenticate = async () => ({ kind: "public" });

export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const log = deps.log ?? createLogger(config.logLevel);
  const networks: RunningNetwork[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.all(networks.map((n) => n.close()));
  };
  try {
    // Sequential start keeps anvil's startup bursts apart; it takes well under a second each.
    for (const net of config.networks) networks.push(await startNetwork(config, net, { log, authenticate: publicOnly }));
  } catch (err) {
    await closeAll();
    throw err;
  }
  return {
    networks,
    network(name) {
      const n = networks.find((x) => x.config.name === name);
      if (!n) throw new Error(`network ${name} is not running`);
      return n;
    },
    close: closeAll,
  };
}
