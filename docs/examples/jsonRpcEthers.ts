// Read the chain through the gateway with ethers.
//   GATEWAY_URL=http://127.0.0.1:8545 npx tsx docs/examples/jsonRpcEthers.ts
import { JsonRpcProvider } from "ethers";

const provider = new JsonRpcProvider(process.env.GATEWAY_URL ?? "http://127.0.0.1:8545", undefined, { staticNetwork: true });
const [network, blockNumber, validators] = await Promise.all([
  provider.getNetwork(),
  provider.getBlockNumber(),
  provider.send("platform_getValidatorList", []),
]);
console.log(JSON.stringify({ chainId: Number(network.chainId), blockNumber, validators }));
provider.destroy();
