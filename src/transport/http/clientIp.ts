// Who the caller is when it has no key: its IP. X-Forwarded-For is believed only from configured proxies
// (anyone can send the header); then the caller is the right-most address not itself a trusted proxy.
import { BlockList, isIP } from "node:net";

/** Which addresses are trusted proxies (TRUSTED_PROXIES): single IPs or CIDR ranges. A Set of IPs is one too. */
export interface ProxyMatcher {
  has(ip: string): boolean;
}

/** A matcher for "10.0.0.1", "10.0.0.0/8", "fd00::/8"...; throws on an entry that is neither an IP nor a CIDR. */
/** A matcher whose list a reloaded configuration replaces (TRUSTED_PROXIES live). */
export function liveTrustedProxies(entries: readonly string[]): ProxyMatcher & { replace(entries: readonly string[]): void } {
  let current = trustedProxies(entries);
  return {
    has: (ip) => current.has(ip),
    replace(next) {
      current = trustedProxies(next);
    },
  };
}

export function trustedProxies(entries: readonly string[]): ProxyMatcher {
  if (entries.length === 0) return { has: () => false };
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix] = entry.trim().split("/");
    const family = isIP(address);
    if (family === 0 || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) throw new Error(`"${entry}" is not an IP address or a CIDR range`);
    const type = family === 4 ? "ipv4" : "ipv6";
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return { has: (ip) => isIP(ip) !== 0 && list.check(ip, isIP(ip) === 4 ? "ipv4" : "ipv6") };
}

export function clientIp(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: ProxyMatcher): string {
  const remote = normalise(remoteAddress ?? "unknown");
  if (!trustedProxies.has(remote) || forwardedFor === undefined) return remote;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((s) => normalise(s.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trustedProxies.has(hops[i]!)) return hops[i]!;
  return hops[0] ?? remote;
}

export function normalise(ip: string): string {
  return ip.startsWith("::ffff:") ? ip.slice(7) : ip;
}
