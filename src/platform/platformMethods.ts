// The custom platform_* JSON-RPC methods (Stability-compatible shapes), registered on the RPC core so JSON-RPC
// and Connect share them. Results are {code: 200, value: [...]}; the sponsored method returns a hash.
import { GatewayError, type JsonValue } from "../errors.js";
import type { RpcCore } from "../rpc/rpcCore.js";
import type { Validators } from "./validators.js";
import type { SupportedTokens } from "./supportedTokens.js";
import type { Sponsorship } from "./sponsorship.js";

export interface PlatformServices {
  validators: Validators;
  tokens: SupportedTokens;
  sponsorship: Sponsorship;
}

/** params `[]` or `[blockHash]`. */
export function optionalBlockHash(method: string, params: JsonValue[]): string | undefined {
  if (params.length === 0) return undefined;
  if (params.length === 1 && typeof params[0] === "string" && /^0x[0-9a-fA-F]{64}$/.test(params[0])) return params[0];
  throw new GatewayError("invalid_params", `Invalid params: ${method} takes [] or [blockHash] (a 0x-prefixed 32-byte hash)`);
}

export function registerPlatformMethods(core: RpcCore, s: PlatformServices): void {
  const ok = (value: string[]): JsonValue => ({ code: 200, value });
  core.register("platform_getValidatorList", async (_ctx, params) => ok(await s.validators.list(optionalBlockHash("platform_getValidatorList", params))));
  core.register("platform_getActiveValidatorList", async (_ctx, params) => ok(await s.validators.active(optionalBlockHash("platform_getActiveValidatorList", params))));
  core.register("platform_getSupportedTokens", async (_ctx, params) => {
    optionalBlockHash("platform_getSupportedTokens", params);
    return ok(s.tokens.list());
  });
  core.register("platform_sendSponsoredTransaction", async (ctx, params) => {
    if (params.length !== 3 || !params.every((p) => typeof p === "string")) {
      throw new GatewayError("invalid_params", "Invalid params: platform_sendSponsoredTransaction takes [rawSignedTx, sponsorAddress, sponsorSignature]");
    }
    const [raw, sponsor, signature] = params as [string, string, string];
    return s.sponsorship.send(ctx.access, raw, sponsor, signature);
  });
}
