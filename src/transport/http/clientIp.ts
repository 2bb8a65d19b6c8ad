// Who the caller is when it has no key: its IP. X-Forwarded-For is believed only from configured proxies
// (anyone can send the header); then the caller is the right-most address not itself a trusted proxy.
export function clientIp(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: ReadonlySet<string>): string {
  const remote = normalise(remoteAddress ?? "unknown");
  if (!trustedProxies.has(remote) || forwardedFor === undefined) return remote;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((s) => normalise(s.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) if (!trustedProxies.has(hops[i]!)) return hops[i]!;
  return hops[0] ?? remote;
}

function normalise(ip: string): string {
  return ip.startsWith("::ffff:") ? ip.slice(7) : ip;
}
