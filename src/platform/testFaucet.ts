// Test funds on an embedded dev chain: the node's own balance override (anvil_setBalance), no transaction, no
// signer's nonce touched. Only a network whose node the gateway started itself has one; callers reach it
// through RpcService.RequestTestFunds (an API key, one transaction of its daily quota per request).
import type { UpstreamPool } from "../chain/upstreamPool.js";

/** Credited per request: enough for thousands of transactions at any fee a dev chain charges. */
export const TEST_FUNDS_WEI = 10n ** 19n;

export class TestFaucet {
  constructor(private readonly pool: UpstreamPool) {}

  /** Credits TEST_FUNDS_WEI to `address`; its new balance. */
  async fund(address: string): Promise<bigint> {
    const balance = BigInt((await this.pool.call("eth_getBalance", [address, "latest"])) as string) + TEST_FUNDS_WEI;
    await this.pool.call("anvil_setBalance", [address, "0x" + balance.toString(16)]);
    return balance;
  }
}
