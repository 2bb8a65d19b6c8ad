// New blocks as they come, with viem over the gateway's WebSocket (eth_subscribe newHeads underneath).
//   GATEWAY_URL=http://127.0.0.1:8545 npx tsx docs/examples/webSocketViem.ts
import { createPublicClient, webSocket } from "viem";

const client = createPublicClient({ transport: webSocket((process.env.GATEWAY_URL ?? "http://127.0.0.1:8545").replace(/^http/, "ws")) });
const blocks: number[] = [];
await new Promise<void>((done) => {
  const unwatch = client.watchBlocks({
    onBlock: (block) => {
      blocks.push(Number(block.number));
      if (blocks.length === 3) {
        unwatch();
        done();
      }
    },
  });
});
console.log(JSON.stringify({ chainId: await client.getChainId(), blocks }));
await (await client.transport.getRpcClient()).close();
