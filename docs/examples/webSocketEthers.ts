// New blocks as they come, with ethers' WebSocketProvider on the gateway.
//   GATEWAY_URL=http://127.0.0.1:8545 npx tsx docs/examples/webSocketEthers.ts
import { WebSocketProvider } from "ethers";

const provider = new WebSocketProvider((process.env.GATEWAY_URL ?? "http://127.0.0.1:8545").replace(/^http/, "ws"));
const blocks: number[] = [];
await new Promise<void>((done) => {
  void provider.on("block", (n: number) => {
    blocks.push(n);
    if (blocks.length === 3) done();
  });
});
console.log(JSON.stringify({ chainId: Number((await provider.getNetwork()).chainId), blocks }));
await provider.destroy();
