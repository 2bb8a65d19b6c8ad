// Test funds on an embedded dev chain: the node's own balance override (anvil_setBalance), no transaction, no
// signer's nonce touched. Only a network whose node the gateway started itself has one; callers reach it
// through RpcService.RequestTestFunds (an API key, one transaction of its daily quota per request).
import type { UpstreamPool } from "../chain/upstreamPool.js";

/** Credited per request: enough for thousands of transactions at any fee a dev chain charges. */
export const TEST_FUNDS_WEI = 10n ** 19n;

export class TestFaucet {
  /** The last credit asked per address: credits to one address run one after another. */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(private readonly pool: UpstreamPool) {}

  /**
   * Credits TEST_FUNDS_WEI to `address`; its new balance. Read, add and set run in turn per address: run at
   * once, 50 concurrent credits read the same balance and credited 280 ETH-equivalent while reporting 500.
   * (The dev chain has one gateway: its data directory is held.)
   */
  fund(address: string): Promise<bigint> {
    const key = address.toLowerCase();
    const credit = async (): Promise<bigint> => {
      const balance = BigInt((await this.pool.call("eth_getBalance", [address, "pending"])) as string) + TEST_FUNDS_WEI;
      await this.pool.call("anvil_setBalance", [address, "0x" + balance.toString(16)]);
      return balance;
    };
    const previous = this.turns.get(key) ?? Promise.resolve();
    const mine = previous.then(credit, credit);
    const settled = mine.catch(() => undefined);
    this.turns.set(key, settled);
    void settled.then(() => {
      if (this.turns.get(key) === settled) this.turns.delete(key);
    });
    return mine;
  }
}
