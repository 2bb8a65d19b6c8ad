// An IPv6 client is counted by its /64 (found past #62's list): a subscriber's /64 holds 2^64 addresses, so a
// new source address for every request or connection took every per-IP limit (the request limit, connection
// shares, body budgets, HTTP/2 bans) for free. Loopback and link-local stay whole; NAT64 is the IPv4 it
// carries; a trusted proxy is still exempt by its own address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { BodyBudget } from "../../../src/transport/http/bodyBudget.js";
import { clientIp, ipKey, trustedProxies } from "../../../src/transport/http/clientIp.js";
import { ConnectionSlots, PerSecond } from "../../../src/transport/http/connectionSlots.js";
import { StreamResets } from "../../../src/transport/http/streamResets.js";
import { startTestGateway } from "../../helpers/gateway.js";

describe("the key an address is counted under", () => {
  it("IPv6: its /64; IPv4, loopback, link-local: the address; NAT64: the IPv4 inside", () => {
    expect(ipKey("2001:db8:1:2::5")).toBe("2001:db8:1:2::/64");
    expect(ipKey("2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(ipKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(ipKey("2001:db8:1:3::5")).not.toBe(ipKey("2001:db8:1:2::5"));
    expect(ipKey("2001:db8:1:2::1.2.3.4")).toBe("2001:db8:1:2::/64");
    expect(ipKey("203.0.113.7")).toBe("203.0.113.7");
    expect(ipKey("::1")).toBe("::1");
    expect(ipKey("fe80::1")).toBe("fe80::1");
    expect(ipKey("64:ff9b::c000:221")).toBe("192.0.2.33");
    expect(ipKey("64:ff9b::192.0.2.33")).toBe("192.0.2.33");
    expect(ipKey("unknown")).toBe("unknown");
  });

  it("clientIp counts a client by its key, a trusted proxy speaking for itself by its address", () => {
    const trusted = trustedProxies(["2001:db8:ffff::7"]);
    expect(clientIp("2001:db8:1:2::5", undefined, trusted)).toBe("2001:db8:1:2::/64");
    expect(clientIp("2001:db8:ffff::7", "2001:db8:9:9::abcd", trusted)).toBe("2001:db8:9:9::/64");
    expect(clientIp("2001:db8:ffff::7", undefined, trusted)).toBe("2001:db8:ffff::7");
  });

  it("the edge's per-IP counts take a /64 as one client; a trusted proxy in it is exempt by its address", () => {
    const proxy = trustedProxies(["2001:db8:1:2::ff"]);
    const slots = new ConnectionSlots(2, proxy);
    expect(["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2::3"].map((ip) => slots.take(ip))).toEqual([true, true, false]);
    expect(slots.take("2001:db8:1:3::1")).toBe(true);
    expect(slots.take("2001:db8:1:2::ff")).toBe(true);
    const perSecond = new PerSecond();
    for (let i = 1; i <= 5; i++) perSecond.count(`2001:db8:1:2::${i}`);
    expect(perSecond.seen("2001:db8:1:2::99")).toBe(5);
    const budget = new BodyBudget({ totalBytes: 1_000, perIpBytes: 100 });
    expect(budget.reserve("2001:db8:1:2::1", 60)).toBe(true);
    expect(budget.reserve("2001:db8:1:2::2", 60)).toBe(false);
    const resets = new StreamResets({ budget: 2, windowMs: 10_000, backoffMs: 1_000 });
    expect(["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2::3"].map((ip) => resets.note(ip))).toEqual([false, false, true]);
    expect(resets.banned("2001:db8:1:2::4")).toBe(true);
    expect(resets.banned("2001:db8:1:3::4")).toBe(false);
    resets.close();
  });
});

describe("the request limit of IPv6 clients behind a trusted proxy", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      mutate: (c) => {
        c.rateLimit.requestsPerWindow = 10;
        c.trustedProxies = ["127.0.0.1"];
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("a new address of one /64 for every call is one client: 10 answered, then 429; another /64 is served", async () => {
    const call = (forwardedFor: string) =>
      fetch(gw.network("testnet").url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      }).then((r) => r.status);
    const statuses: number[] = [];
    for (let i = 1; i <= 15; i++) statuses.push(await call(`2001:db8:1:2::${i.toString(16)}`));
    expect(statuses).toEqual([...Array(10).fill(200), ...Array(5).fill(429)]);
    expect(await call("2001:db8:1:3::1")).toBe(200);
  });
});
