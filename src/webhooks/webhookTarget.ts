// Where a webhook may point: http(s) URLs whose host resolves only to public addresses, so a key holder
// cannot make the gateway call its own loopback, the operator's private network, link-local addresses or a
// cloud's metadata service (server-side request forgery). Checked at registration and again at every
// connection (the name may resolve elsewhere by then: DNS rebinding), unless WEBHOOK_ALLOW_PRIVATE.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { GatewayError } from "../errors.js";

// Two lists: Node's BlockList matches an IPv4 address against IPv6 rules as ::ffff:a.b.c.d, so one list with
// ::ffff:0:0/96 in it refused every IPv4 address, public ones included.
const blockedV4 = new BlockList();
const blockedV6 = new BlockList();
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
  blockedV4.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96], // NAT64
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  blockedV6.addSubnet(net, prefix, "ipv6");

/** Whether an address is one a webhook must not reach (loopback, private, link-local, metadata, ...). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return blockedV4.check(address, "ipv4");
  // IPv6 forms that carry an IPv4 address are judged by it: IPv4-mapped, IPv4-compatible (::a.b.c.d, written
  // ::7f00:1 once a URL is parsed) and 6to4 (2002:aabb:ccdd::).
  const embedded = embeddedIpv4(address);
  if (embedded !== undefined) return blockedV4.check(embedded, "ipv4");
  return blockedV6.check(address, "ipv6");
}

/** The IPv4 address an IPv6 one embeds (mapped ::ffff:0:0/96, compatible ::/96, 6to4 2002::/16), if any. */
export function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (bytes === undefined) return undefined;
  const v4 = (at: number) => `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`;
  const zeroUpTo = (n: number) => bytes.subarray(0, n).every((b) => b === 0);
  if (zeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12);
  // :: and ::1 are blocked as themselves; anything else in ::/96 is IPv4-compatible.
  if (zeroUpTo(12) && (bytes[12]! | bytes[13]! | bytes[14]!) !== 0) return v4(12);
  if (zeroUpTo(12) && bytes[15]! > 1) return v4(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2);
  return undefined;
}

/** An IPv6 address's 16 bytes (a trailing dotted quad allowed); undefined when it is not one. */
function ipv6Bytes(address: string): Uint8Array | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, "");
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? (text.split("::") as [string, string]) : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = Number.parseInt(g, 16);
    bytes[2 * i] = n >> 8;
    bytes[2 * i + 1] = n & 0xff;
  });
  return bytes;
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
