// eth_sendRawTransaction (API keys only): the caller's signed bytes go through the journal like the gateway's
// own writes, so they are accepted once, never lost, never sent twice.
import { GatewayError } from "../../errors.js";
import { requireAllowedRawTarget } from "../../keys/allowedTargets.js";
import type { Sequencer } from "../../sequencer/sequencer.js";
import type { CustomMethod } from "../rpcCore.js";

export function ethSendRawTransaction(sequencer: Pick<Sequencer, "submitRaw">): CustomMethod {
  return async (ctx, params) => {
    if (params.length !== 1 || typeof params[0] !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(params[0])) {
      throw new GatewayError("invalid_params", "Invalid params: eth_sendRawTransaction takes one 0x-hex signed transaction");
    }
    requireAllowedRawTarget(ctx.access, params[0]);
    return sequencer.submitRaw(params[0]);
  };
}
