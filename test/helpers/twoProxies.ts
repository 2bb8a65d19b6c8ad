// One anvil behind two proxies (faultyUpstream.ts) and a gateway routed to both: the first is asked first (the
// second answers 40 ms late), no hedging, heads probed every 200 ms, reads not coalesced. For tests of what the
// gateway does with a node that answers wrong while another answers right.
import type { ChildProcess } from "node:child_process";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "./anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "./faultyUpstream.js";
import { startTestGateway } from "./gateway.js";

export interface TwoProxies {
  /** The anvil itself. */
  node: string;
  /** Asked first. */
  first: FaultyUpstream;
  /** 40 ms late on every answer. */
  second: FaultyUpstream;
  gw: Gateway;
  /** The gateway's testnet URL. */
  url: string;
  close(): Promise<void>;
}

/** `prepare` sets the proxies' faults before the gateway first probes them. */
export async function startTwoProxies(prepare: (first: FaultyUpstream, second: FaultyUpstream) => void = () => undefined): Promise<TwoProxies> {
  const port = await freePort();
  const anvil: ChildProcess = await startAnvil(port);
  const node = `http://127.0.0.1:${port}`;
  const first = await startFaultyUpstream(node);
  const second = await startFaultyUpstream(node);
  second.slow(40, /./);
  prepare(first, second);
  const gw = await startTestGateway({
    mutate: (c) => {
      c.networks[0]!.upstreams = [first.url, second.url];
      c.networks[0]!.routing.hedge = false;
      c.upstreamProbeIntervalMs = 200;
      c.coalesceReads = false;
    },
  });
  return {
    node,
    first,
    second,
    gw,
    url: gw.network("testnet").url,
    close: async () => {
      await gw.close();
      first.close();
      second.close();
      await kill9(anvil);
    },
  };
}
