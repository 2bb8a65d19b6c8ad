// The custom platform_* JSON-RPC methods (Stability-compatible shapes), registered on the RPC core so JSON-RPC
// and Connect share them, each also under the stability_* name Stability's guide and clients call (the same
// handler). Results are {code: 200, value: [...]}; the sponsored method returns a hash.
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

/** Every custom method is served under both prefixes: ours and Stability's. */
export const METHOD_PREFIXES = ["platform_", "stability_"] as const;

export function registerPlatformMethods(core: RpcCore, s: PlatformServices): void {
  const ok = (value: string[]): JsonValue => ({ code: 200, value });
  for (const prefix of METHOD_PREFIXES) {
    const name = (m: string) => prefix + m;
    core.register(name("getValidatorList"), async (_ctx, params) => ok(await s.validators.list(optionalBlockHash(name("getValidatorList"), params))));
    core.register(name("getActiveValidatorList"), async (_ctx, params) =>
      ok(await s.validators.active(optionalBlockHash(name("getActiveValidatorList"), params))),
    );
    core.register(name("getSupportedTokens"), async (_ctx, params) => {
      optionalBlockHash(name("getSupportedTokens"), params);
      return ok(s.tokens.list());
    });
    core.register(name("sendSponsoredTransaction"), async (ctx, params) => {
      if (params.length !== 3 || !params.every((p) => typeof p === "string")) {
        throw new GatewayError("invalid_params", `Invalid params: ${name("sendSponsoredTransaction")} takes [rawSignedTx, sponsorAddress, sponsorSignature]`);
      }
      const [raw, sponsor, signature] = params as [string, string, string];
      return s.sponsorship.send(ctx.access, raw, sponsor, signature);
    });
  }
}
