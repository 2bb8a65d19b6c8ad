// A web page calling the gateway through Connect-Web (Connect JSON over fetch, cross-origin via CORS):
// reads the chain id, follows two new blocks on a server stream (SubscribeNewHeads) and writes a ZKT message
// with the try-it-out signer. Bundle with
//   npx esbuild docs/examples/web/main.ts --bundle --format=esm --outfile=docs/examples/web/main.js
// and open index.html?gateway=http://127.0.0.1:8545 from any static server.
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { RpcService } from "../../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../../gen/chaingateway/zkt/v1/zkt_pb.js";

const gateway = new URLSearchParams(location.search).get("gateway") ?? "http://127.0.0.1:8545";
const transport = createConnectTransport({ baseUrl: gateway });
const out = document.getElementById("out")!;

async function run(): Promise<void> {
  const rpc = createClient(RpcService, transport);
  const { chainIdDecimal } = await rpc.getChainId({});
  // A server stream over fetch: each new block's header as it comes; leaving the loop ends the stream.
  const heads: number[] = [];
  for await (const head of rpc.subscribeNewHeads({})) {
    heads.push(Number(head.number));
    if (heads.length === 2) break;
  }
  const { hash } = await createClient(ZktService, transport).writeMessage({ arguments: "hello from Connect-Web" });
  out.textContent = JSON.stringify({ chainId: Number(chainIdDecimal), heads, hash });
  out.dataset.done = "true";
}

run().catch((err: unknown) => {
  out.textContent = "error: " + String(err);
  out.dataset.done = "true";
});
