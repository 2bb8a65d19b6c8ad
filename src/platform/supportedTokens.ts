// The tokens a network supports (experimental: prepares paying fees in network-supported tokens). From config,
// checked at start to hold code; on the embedded dev chain a demo ERC-20 is deployed and listed.
import { ContractFactory, getAddress, getCreateAddress, Wallet, JsonRpcProvider } from "ethers";
import type { UpstreamPool } from "../chain/upstreamPool.js";
import type { Logger } from "../log/logger.js";
import artifact from "./demoToken.artifact.json" with { type: "json" };

// anvil's first well-known dev account: a dev-chain-only deployer, never used for gateway signing.
const ANVIL_DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

export class SupportedTokens {
  private tokens: string[] = [];

  constructor(
    private readonly pool: UpstreamPool,
    private readonly log: Logger,
  ) {}

  list(): string[] {
    return [...this.tokens];
  }

  /** Adds configured tokens that hold code; warns (does not fail) about the rest or an unreachable node. */
  async addConfigured(addresses: string[]): Promise<void> {
    for (const a of addresses) {
      const address = getAddress(a);
      try {
        const code = await this.pool.call("eth_getCode", [address, "latest"]);
        if (code === "0x") this.log.warn("supported token has no code on this network; listing it anyway", { token: address });
      } catch (err) {
        this.log.warn("could not check a supported token (node unreachable); listing it anyway", { token: address, error: (err as Error).message });
      }
      this.tokens.push(address);
    }
  }

  /** Embedded dev chain: deploys the demo ERC-20 from the dev account and lists it. */
  async deployDemoToken(nodeUrl: string, chainId: number): Promise<string> {
    const provider = new JsonRpcProvider(nodeUrl, chainId, { staticNetwork: true, pollingInterval: 50 });
    try {
      // The dev account's first deployment: on a dev chain kept across restarts it is already there.
      const first = getCreateAddress({ from: new Wallet(ANVIL_DEV_KEY).address, nonce: 0 });
      if ((await provider.getCode(first)) !== "0x") {
        this.tokens.push(getAddress(first));
        return getAddress(first);
      }
      const factory = new ContractFactory(artifact.abi, artifact.bytecode, new Wallet(ANVIL_DEV_KEY, provider));
      const contract = await factory.deploy(10n ** 27n);
      await contract.waitForDeployment();
      const address = getAddress(await contract.getAddress());
      this.tokens.push(address);
      this.log.info("demo token deployed", { token: address });
      return address;
    } finally {
      provider.destroy();
    }
  }
}
