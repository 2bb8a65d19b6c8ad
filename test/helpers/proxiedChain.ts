// One anvil behind `count` fault-injecting proxies (test/helpers/faultyUpstream.ts): "nodes" of one chain
// whose faults a test chooses, and the gateway a test starts on them; one close for all of it.
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "./anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "./faultyUpstream.js";

export interface ProxiedChain {
  /** The anvil itself, for reading the truth past the proxies. */
  node: string;
  proxies: FaultyUpstream[];
  /** The gateway the test started on it, closed first by close(). */
  gateway?: Gateway;
  close(): Promise<void>;
}

export async function proxiedChain(count = 1): Promise<ProxiedChain> {
  const port = await freePort();
  const child = await startAnvil(port);
  const node = `http://127.0.0.1:${port}`;
  const proxies: FaultyUpstream[] = [];
  for (let i = 0; i < count; i++) proxies.push(await startFaultyUpstream(node));
  const chain: ProxiedChain = {
    node,
    proxies,
    async close() {
      await chain.gateway?.close();
      for (const p of proxies) p.close();
      await kill9(child);
    },
  };
  return chain;
}
