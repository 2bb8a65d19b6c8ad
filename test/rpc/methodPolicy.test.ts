// Which methods a caller may reach: the same verdict on the first call and on every later one (the class of
// a method name is remembered), whatever the order in which names are first seen.
import { describe, expect, it } from "vitest";
import type { Access } from "../../src/keys/access.js";
import { checkMethodAllowed } from "../../src/rpc/methodPolicy.js";

const PUBLIC: Access = { kind: "public" };
const KEY: Access = { kind: "key", keyId: "k1", walletIndex: 1 };

function verdict(method: string, access: Access, isCustom = false): string {
  try {
    checkMethodAllowed(method, access, isCustom);
    return "allowed";
  } catch (err) {
    return (err as Error).message;
  }
}

describe("method policy", () => {
  const cases: [string, Access, boolean, RegExp | "allowed"][] = [
    ["eth_chainId", PUBLIC, false, "allowed"],
    ["eth_blobBaseFee", KEY, false, /not supported on this network/],
    ["anvil_setBalance", KEY, false, /not available on this gateway/],
    ["eth_sendTransaction", KEY, false, /not available on this gateway/],
    ["eth_sendRawTransaction", PUBLIC, false, /needs an API key/],
    ["eth_sendRawTransaction", KEY, false, "allowed"],
    ["platform_sendSponsoredTransaction", PUBLIC, true, /needs an API key/],
    ["platform_sendSponsoredTransaction", KEY, true, "allowed"],
    ["platform_sendSponsoredTransaction", KEY, false, /^Method not found: platform_sendSponsoredTransaction$/],
    ["platform_validators", PUBLIC, true, "allowed"],
    ["platform_validators", PUBLIC, false, /^Method not found/],
    ["no_such_method", PUBLIC, false, /^Method not found: no_such_method$/],
    // An allow-list of exact names (#28.7): near misses a node might accept are never forwarded.
    ["eth_sendtransaction", KEY, false, /^Method not found: eth_sendtransaction$/],
    ["ETH_CHAINID", PUBLIC, false, /^Method not found/],
    ["eth_chainId\u0000", PUBLIC, false, /^Method not found/],
    ["eth_chainId ", PUBLIC, false, /^Method not found/],
    ["eth_madeUpMethod", PUBLIC, false, /^Method not found: eth_madeUpMethod$/],
    ["net_bogus", PUBLIC, false, /^Method not found/],
    ["eth_getBlockReceipts", PUBLIC, false, "allowed"],
    ["web3_clientVersion", PUBLIC, false, "allowed"],
  ];

  it("gives each method its verdict, the first time and every time after, in either order", () => {
    for (const round of [cases, [...cases].reverse(), cases]) {
      for (const [method, access, isCustom, expected] of round) {
        const got = verdict(method, access, isCustom);
        if (expected === "allowed") expect(got, method).toBe("allowed");
        else expect(got, method).toMatch(expected);
      }
    }
  });

  it("judges a long, unremembered method name the same way", () => {
    const long = "eth_" + "x".repeat(500);
    expect(verdict(long, PUBLIC)).toMatch(/^Method not found/);
    expect(verdict(long, PUBLIC)).toMatch(/^Method not found/);
    expect(verdict("debug_" + "x".repeat(500), KEY)).toMatch(/not available/);
  });
});
