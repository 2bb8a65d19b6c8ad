// A backend calling the gateway through the generated gRPC client (Connect, HTTP/2): a read over RpcService
// and every ZKT operation — message, deploy, read, write with wait — signed by your key's wallet (or the
// shared try-it-out signer without API_KEY).
//   GATEWAY_URL=http://127.0.0.1:8545 API_KEY=cgw_… npx tsx docs/examples/connectClient.ts
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { ZktService } from "../../gen/chaingateway/zkt/v1/zkt_pb.js";

const transport = createGrpcTransport({ baseUrl: process.env.GATEWAY_URL ?? "http://127.0.0.1:8545" });
const headers = process.env.API_KEY ? { authorization: `Bearer ${process.env.API_KEY}` } : undefined;
const rpc = createClient(RpcService, transport);
const zkt = createClient(ZktService, transport);
const list = (v: unknown[]) => fromJson(ListValueSchema, v as never);

const { chainIdDecimal } = await rpc.getChainId({});
const message = await zkt.writeMessage({ arguments: "hello over gRPC" }, { headers });
const status = await zkt.getTransactionStatus({ queueId: message.queueId });

const source = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Counter { uint256 public count; event Bumped(uint256 count); function bump(uint256 by) external { count += by; emit Bumped(count); } }`;
const deployed = await zkt.deployContract({ code: source }, { headers });
const abi = list(["function count() view returns (uint256)", "function bump(uint256 by)", "event Bumped(uint256 count)"]);
const write = await zkt.writeContract({ to: deployed.contractAddress, abi, method: "bump", arguments: list(["5"]), wait: true }, { headers });
const read = await zkt.readContract({ to: deployed.contractAddress, abi, method: "count", arguments: list([]) }, { headers });

console.log(
  JSON.stringify({
    chainId: Number(chainIdDecimal),
    hash: message.hash,
    status: status.status,
    contractAddress: deployed.contractAddress,
    writeStatus: write.receipt?.status,
    event: write.receipt?.logs[0]?.event,
    count: toJson(ListValueSchema, read.output!),
  }),
);
