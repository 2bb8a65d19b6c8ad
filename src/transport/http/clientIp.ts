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

/** The caller as its limits count it: a client's ipKey; a trusted proxy speaking for itself, its address. */
export function clientIp(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: ProxyMatcher): string {
  const remote = normalise(remoteAddress ?? "unknown");
  if (!trustedProxies.has(remote)) return ipKey(remote);
  if (forwardedFor === undefined) return remote;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((s) => normalise(s.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trustedProxies.has(hops[i]!)) return ipKey(hops[i]!);
  return hops[0] ?? remote;
}

/**
 * The key per-client limits count an address under: an IPv4 address as it is, an IPv6 address as its /64, one
 * subscriber's usual allocation, inside which a new address for every request costs an attacker nothing.
 * Loopback and link-local IPv6 stay whole (one host; every LAN's fe80::/64); NAT64's 64:ff9b::/96 is the
 * IPv4 address it carries.
 */
export function ipKey(ip: string): string {
  if (!ip.includes(":") || ip === "::1" || /^fe[89ab]/i.test(ip)) return ip;
  const g = ipv6Groups(ip);
  if (!g) return ip;
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0) {
    return `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`;
  }
  return `${g
    .slice(0, 4)
    .map((n) => n.toString(16))
    .join(":")}::/64`;
}

/** An IPv6 address's eight 16-bit groups ("::" filled, a trailing dotted IPv4 as two); undefined if not one. */
function ipv6Groups(ip: string): number[] | undefined {
  if (isIP(ip) !== 6) return undefined;
  const halves = ip.split("%")[0]!.split("::");
  const parts = halves.map((h) => (h === "" ? [] : h.split(":")));
  const last = parts[parts.length - 1]!;
  const v4 = last.length > 0 && last[last.length - 1]!.includes(".") ? last.pop()!.split(".").map(Number) : undefined;
  if (v4) last.push(((v4[0]! << 8) | v4[1]!).toString(16), ((v4[2]! << 8) | v4[3]!).toString(16));
  const head = parts[0]!;
  const tail = parts.length > 1 ? parts[1]! : [];
  const fill = parts.length > 1 ? Array<string>(8 - head.length - tail.length).fill("0") : [];
  return [...head, ...fill, ...tail].map((h) => Number.parseInt(h, 16));
}

export function normalise(ip: string): string {
  return ip.startsWith("::ffff:") ? ip.slice(7) : ip;
}
