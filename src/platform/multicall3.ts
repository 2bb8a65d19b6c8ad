// Multicall3 at its canonical address on the embedded dev chains, so viem's multicall, ethers' helpers and
// wagmi work unchanged (they look for it there). Our own implementation of its interface
// (contracts/Multicall3.sol): deployed once from a dev account, its runtime code then set at the canonical
// address (anvil_setCode), as on chains where it was deployed keylessly.
import { ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import artifact from "./multicall3.artifact.json" with { type: "json" };

export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";
/** anvil's second dev account: the first deploys the demo token at the same time. */
const DEV_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

export async function installMulticall3(nodeUrl: string, chainId: number): Promise<void> {
  const provider = new JsonRpcProvider(nodeUrl, chainId, { staticNetwork: true, pollingInterval: 50 });
  try {
    if ((await provider.getCode(MULTICALL3_ADDRESS)) !== "0x") return;
    const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, new Wallet(DEV_KEY, provider)).deploy();
    await deployed.waitForDeployment();
    const code = await provider.getCode(await deployed.getAddress());
    await provider.send("anvil_setCode", [MULTICALL3_ADDRESS, code]);
  } finally {
    provider.destroy();
  }
}
