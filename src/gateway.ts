// The whole gateway: every configured network, started together and stopped together.
import type { GatewayConfig } from "./config/config.js";
import { createLogger, type Logger } from "./log/logger.js";
import { startNetwork, type RunningNetwork } from "./network.js";
import type { Authenticate } from "./transport/jsonrpc/jsonRpcRoutes.js";
import { MasterSeed } from "./keys/masterSeed.js";
import { MemorySubmissionStore } from "./store/submissionStore.js";
import { SolidityCompiler } from "./zkt/solc/compileSolidity.js";

export interface Gateway {
  networks: RunningNetwork[];
  /** Address of the shared try-it-out signer (the same on every network). */
  publicSignerAddress: string;
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
  const seed = MasterSeed.load(config.dataDir);
  const store = new MemorySubmissionStore();
  const compiler = new SolidityCompiler();
  const closeAll = async (): Promise<void> => {
    await Promise.all(networks.map((n) => n.close()));
    await compiler.close();
  };
  try {
    // Sequential start keeps anvil's startup bursts apart; it takes well under a second each.
    for (const net of config.networks) networks.push(await startNetwork(config, net, { log, authenticate: publicOnly, seed, store, compiler }));
  } catch (err) {
    await closeAll();
    throw err;
  }
  return {
    networks,
    publicSignerAddress: seed.wallet(0).address,
    network(name) {
      const n = networks.find((x) => x.config.name === name);
      if (!n) throw new Error(`network ${name} is not running`);
      return n;
    },
    close: closeAll,
  };
}
