// compose.yaml's topology as processes: one anvil, two gateway replicas on one PostgreSQL schema and Redis
// (one master phrase), behind deploy/nginx.conf rendered with local addresses (nginx.ts).
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { freePort, kill9, startAnvil } from "./anvilProcess.js";
import { recordSecret } from "./gateway.js";
import { type GatewayProcess, startGatewayProcess } from "./gatewayProcess.js";
import { type LoadBalancer, startNginx } from "./nginx.js";
import { freshSchemaUrl } from "./postgres.js";

export interface Replicas {
  /** The node's URL. */
  node: string;
  gateways: GatewayProcess[];
  lb: LoadBalancer;
  /** Kills every process and drops the schema. */
  stop(): Promise<void>;
}

/** Starts the topology; `env` is added to each replica's settings. */
export async function startReplicas(prefix: string, env: Record<string, string> = {}): Promise<Replicas> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const children: ChildProcess[] = [];
  const gateways: GatewayProcess[] = [];
  const nodePort = await freePort();
  children.push(await startAnvil(nodePort));
  const node = `http://127.0.0.1:${nodePort}`;
  const schema = await freshSchemaUrl();
  const stop = async () => {
    await Promise.all([...gateways.map((g) => g.child), ...children].map(kill9));
    await schema.drop();
  };
  try {
    const mnemonic = Wallet.createRandom().mnemonic!.phrase;
    recordSecret(mnemonic);
    const ports = [await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      gateways.push(
        await startGatewayProcess({
          DATA_DIR: join(dir, `data-${i}`),
          TESTNET_PORT: String(port),
          TESTNET_UPSTREAMS: node,
          DATABASE_URL: schema.url,
          REDIS_URL: "redis://127.0.0.1:6379",
          MASTER_MNEMONIC: mnemonic,
          TRUSTED_PROXIES: "127.0.0.1",
          ...env,
        }),
      );
    }
    const lb = await startNginx(dir, ports);
    children.push(lb.child);
    return { node, gateways, lb, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
