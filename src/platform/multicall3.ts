// Multicall3 at its canonical address on the embedded dev chains, so viem's multicall, ethers' helpers and
// wagmi work unchanged (they look for it there). Our own implementation of its interface
// (contracts/Multicall3.sol): deployed once from a dev account, its runtime code then set at the canonical
// address (anvil_setCode), as on chains where it was deployed keylessly; and at the address Stability's own
// network has it (their SDK and viem tutorial call it there: @stabilityprotocol/config), so their multicall
// works on the dev chain too.
import { ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import artifact from "./multicall3.artifact.json" with { type: "json" };

export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";
/** Where Stability's networks have Multicall3, by chain id. */
export const STABILITY_MULTICALL3: Readonly<Record<number, string>> = {
  20180427: "0x3ed62137c5DB927cb137c26455969116BF0c23Cb",
  101010: "0xBA2923DAe45aD6b8B77bff4733c75b0C13F0ce2d",
};
/** anvil's second dev account: the first deploys the demo token at the same time. */
const DEV_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

export async function installMulticall3(nodeUrl: string, chainId: number): Promise<void> {
  const provider = new JsonRpcProvider(nodeUrl, chainId, { staticNetwork: true, pollingInterval: 50 });
  try {
    const addresses = [MULTICALL3_ADDRESS, ...(STABILITY_MULTICALL3[chainId] ? [STABILITY_MULTICALL3[chainId]] : [])];
    const codes = await Promise.all(addresses.map((a) => provider.getCode(a)));
    if (codes.every((c) => c !== "0x")) return;
    let code = codes.find((c) => c !== "0x");
    if (code === undefined) {
      const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, new Wallet(DEV_KEY, provider)).deploy();
      await deployed.waitForDeployment();
      code = await provider.getCode(await deployed.getAddress());
    }
    for (const [i, a] of addresses.entries()) if (codes[i] === "0x") await provider.send("anvil_setCode", [a, code]);
  } finally {
    provider.destroy();
  }
}
