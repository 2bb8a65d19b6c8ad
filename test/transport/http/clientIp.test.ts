// TRUSTED_PROXIES takes IPs and CIDR ranges (#51): a load balancer's X-Forwarded-For names the client only when
// the connection comes from one of them.
import { describe, expect, it } from "vitest";
import { clientIp, trustedProxies } from "../../../src/transport/http/clientIp.js";

describe("client IP behind trusted proxies", () => {
  const trusted = trustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8"]);

  it("matches single addresses and ranges, v4 and v6 (v4-mapped included)", () => {
    expect(["10.1.2.3", "192.168.1.7", "fd12::1"].map((ip) => trusted.has(ip))).toEqual([true, true, true]);
    expect(["11.0.0.1", "192.168.1.8", "fe80::1", "not an ip"].map((ip) => trusted.has(ip))).toEqual([false, false, false, false]);
    expect(clientIp("::ffff:10.9.9.9", "203.0.113.5", trusted)).toBe("203.0.113.5");
  });

  it("believes X-Forwarded-For only from a trusted proxy, and takes the right-most untrusted hop", () => {
    expect(clientIp("203.0.113.9", "1.2.3.4", trusted)).toBe("203.0.113.9");
    expect(clientIp("10.0.0.1", "1.2.3.4, 198.51.100.2, 10.0.0.5", trusted)).toBe("198.51.100.2");
  });

  it("refuses an entry that is neither an IP nor a CIDR", () => {
    expect(() => trustedProxies(["10.0.0.0/x"])).toThrow(/not an IP address or a CIDR range/);
    expect(() => trustedProxies(["proxy.local"])).toThrow(/not an IP address or a CIDR range/);
  });
});
