// Which addresses a webhook may reach: IPv6 forms that embed an IPv4 address are judged by it (#62).
import { describe, expect, it } from "vitest";
import { embeddedIpv4, isPrivateAddress } from "../../src/webhooks/webhookTarget.js";

describe("isPrivateAddress", () => {
  it("reads the IPv4 address inside mapped, compatible and 6to4 IPv6 forms", () => {
    expect(embeddedIpv4("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(embeddedIpv4("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(embeddedIpv4("::7f00:1")).toBe("127.0.0.1");
    expect(embeddedIpv4("::127.0.0.1")).toBe("127.0.0.1");
    expect(embeddedIpv4("2002:7f00:1::")).toBe("127.0.0.1");
    expect(embeddedIpv4("2002:a9fe:a9fe::1")).toBe("169.254.169.254");
    expect(embeddedIpv4("2001:db8::1")).toBeUndefined();
    expect(embeddedIpv4("::1")).toBeUndefined();
  });
  it("refuses private IPv4 however it is written, and keeps public ones public", () => {
    for (const a of ["::7f00:1", "::127.0.0.1", "2002:7f00:1::", "2002:0a00:0001::", "::ffff:a9fe:a9fe", "::1", "::", "fe80::1", "10.0.0.1"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    // 8.8.8.8 itself read as private before: one BlockList held an IPv6 rule (::ffff:0:0/96) every IPv4 address matched.
    for (const a of ["2002:0808:0808::1", "::ffff:8.8.8.8", "2606:4700::1111", "8.8.8.8", "1.1.1.1"]) expect(isPrivateAddress(a), a).toBe(false);
  });
});
