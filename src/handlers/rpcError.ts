// A GatewayError as the contract's RpcError message (JSON-RPC 2.0 / EIP-1474 code, message, data): Batch
// items carry it, and Connect errors carry it as a detail so gRPC clients see what JSON-RPC clients see.
import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { GatewayError } from "../errors.js";
import { RpcErrorSchema, type RpcError } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";

export function toRpcError(err: GatewayError): RpcError {
  return create(RpcErrorSchema, {
    code: err.jsonRpcCode,
    message: err.message,
    ...(err.details === undefined ? {} : { data: fromJson(ValueSchema, err.details) }),
  });
}
