// Where a webhook may point (#56): http(s) URLs whose host resolves only to public addresses, so a key holder
// cannot make the gateway call its own loopback, the operator's private network, link-local addresses or a
// cloud's metadata service (server-side request forgery). Checked at registration and again at every
// connection (the name may resolve elsewhere by then: DNS rebinding), unless WEBHOOK_ALLOW_PRIVATE.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { GatewayError } from "../errors.js";

const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  blocked.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["::ffff:0:0", 96], // IPv4-mapped: checked as IPv4 below
  ["64:ff9b::", 96], // NAT64
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  blocked.addSubnet(net, prefix, "ipv6");

/** Whether an address is one a webhook must not reach (loopback, private, link-local, metadata, ...). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6");
}

const refused = (url: string, why: string): GatewayError =>
  new GatewayError("validation", `the webhook URL ${url} is refused: ${why} (set WEBHOOK_ALLOW_PRIVATE=true to allow private targets)`);

/** The URL a key registered, checked: http(s), no credentials, and (unless allowed) public addresses only. */
export async function checkTarget(text: unknown, allowPrivate: boolean): Promise<URL> {
  if (typeof text !== "string" || text.length > 2048) throw new GatewayError("validation", "url must be an http(s) URL of at most 2048 characters");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new GatewayError("validation", "url must be an http(s) URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new GatewayError("validation", "url must be an http(s) URL");
  if (url.username || url.password) throw new GatewayError("validation", "url must not carry credentials: the signature authenticates deliveries");
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = isIP(host) ? [host] : await resolveAll(host).catch(() => undefined);
  if (!addresses || addresses.length === 0) throw refused(url.origin, `${host} does not resolve`);
  const inside = addresses.find(isPrivateAddress);
  if (inside) throw refused(url.origin, `${host} resolves to ${inside}, a loopback, private, link-local or metadata address`);
  return url;
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list.map((a) => a.address)))));
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * net.connect's `lookup` for deliveries: resolves as usual, then refuses a private answer, so a name that
 * passed at registration cannot be pointed inside later.
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, list) => {
    if (err) return callback(err, []);
    const inside = list.find((a) => isPrivateAddress(a.address));
    if (inside) return callback(Object.assign(new Error(`${hostname} resolves to ${inside.address}, a private address`), { code: "EPRIVATE" }), []);
    if (options.all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}
