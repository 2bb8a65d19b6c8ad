// Self-service issuing of free keys, limited per client IP so the free tier cannot be farmed. The policy
// lives here; the portal route only translates HTTP to it.
import { GatewayError } from "../errors.js";
import type { ApiKeys } from "./apiKeys.js";
import type { WindowLimiter } from "../limits/windowLimiter.js";

export class KeyIssuer {
  constructor(
    readonly keys: ApiKeys,
    private readonly perIp: WindowLimiter,
    /** Self-service keys on (PORTAL_KEYS_PER_HOUR above 0). */
    readonly enabled = true,
  ) {}

  async issue(clientIp: string, label: string | undefined): ReturnType<ApiKeys["create"]> {
    if (!this.enabled) throw new GatewayError("not_found", "self-service keys are off on this gateway (PORTAL_KEYS_PER_HOUR=0): ask its operator for a key");
    const decision = await this.perIp.take(clientIp);
    if (!decision.allowed) {
      throw new GatewayError("rate_limited", `too many keys issued from this address; try again in ${decision.resetSeconds} s`, {
        retryAfterSeconds: decision.resetSeconds,
      });
    }
    return this.keys.create(label === undefined ? {} : { label });
  }
}
