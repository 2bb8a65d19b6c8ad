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

/** One v1 per secret (the current one first; a rotated-out one alongside it while it overlaps). */
export function signature(secret: string | string[], body: string, unixSeconds: number): string {
  const v1 = (s: string) => `,v1=${createHmac("sha256", s).update(`${unixSeconds}.${body}`).digest("hex")}`;
  return `t=${unixSeconds}${(typeof secret === "string" ? [secret] : secret).map(v1).join("")}`;
}

/** The secrets an endpoint signs with now: its own, and the one it replaced until that one's overlap ends. */
export function signingSecrets(e: { secret: string; previousSecret: string | null; previousUntil: Date | null }, now = Date.now()): string[] {
  return e.previousSecret && e.previousUntil && e.previousUntil.getTime() > now ? [e.secret, e.previousSecret] : [e.secret];
}
