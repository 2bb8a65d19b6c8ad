// A network's ZKT core: messages, contract calls and deploys, signed by the sequencer's wallets.
import { ZktCore } from "../zkt/zktCore.js";
import type { ChainPart } from "./chainPart.js";
import type { NetworkContext } from "./networkContext.js";
import type { WebhooksPart } from "./webhooksPart.js";
import type { WritesPart } from "./writesPart.js";

export function startZkt({ gw, net, deps }: NetworkContext, chain: ChainPart, writes: WritesPart, hooks: WebhooksPart): ZktCore {
  return new ZktCore({
    network: net,
    journalNetwork: chain.journalNetwork,
    pool: chain.pool,
    sequencer: writes.sequencer,
    store: deps.store,
    wallets: deps.wallets,
    compiler: deps.compiler,
    waitTimeoutMs: gw.receiptWaitMs,
    callbacks: hooks.callbacks,
  });
}
