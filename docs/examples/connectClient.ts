// A backend calling the gateway through the generated gRPC client (Connect, HTTP/2): a read over RpcService and
// a ZKT message signed by your key's wallet (or the shared signer without API_KEY).
//   GATEWAY_URL=http://127.0.0.1:8545 API_KEY=cgw_… npx tsx docs/examples/connectClient.ts
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";

const transport = createGrpcTransport({ baseUrl: process.env.GATEWAY_URL ?? "http://127.0.0.1:8545" });
const headers = process.env.API_KEY ? { authorization: `Bearer ${process.env.API_KEY}` } : undefined;
const rpc = createClient(RpcService, transport);
const zkt = createClient(ZktService, transport);

const { chainIdDecimal } = await rpc.getChainId({});
const { hash, queueId } = await zkt.writeMessage({ message: "hello over gRPC" }, { headers });
const status = await zkt.getTransactionStatus({ queueId });
console.log(JSON.stringify({ chainId: Number(chainIdDecimal), hash, queueId, status: status.status }));
