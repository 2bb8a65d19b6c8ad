// How a delivery proves it came from the gateway: `chain-gateway-signature: t=<unix seconds>,v1=<hex>`,
// the HMAC-SHA256 of "<t>.<raw body>" with the endpoint's secret (Stripe's scheme, which receivers have
// libraries for). `t` is signed too, so a receiver refusing old ones refuses replays.
import { createHmac, randomBytes } from "node:crypto";

export const SIGNATURE_HEADER = "chain-gateway-signature";
export const EVENT_ID_HEADER = "chain-gateway-event-id";

/** A new endpoint's secret: 32 random bytes, shown once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex")}`;
}
