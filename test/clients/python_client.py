# A Python backend's client, generated from proto/ with Debian's protoc and grpc_python_plugin, against a
# running gateway over gRPC (h2c). Usage: python3 python_client.py <generated dir> <host:port> <api key>
# Prints one JSON object with what each call returned.
import json
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
from chaingateway.rpc.v1 import rpc_pb2, rpc_pb2_grpc  # noqa: E402
from chaingateway.zkt.v1 import zkt_pb2, zkt_pb2_grpc  # noqa: E402

target, api_key = sys.argv[2], sys.argv[3]
auth = [("authorization", f"Bearer {api_key}")]
out = {}
with grpc.insecure_channel(target) as channel:
    rpc = rpc_pb2_grpc.RpcServiceStub(channel)
    out["chainId"] = rpc.Call(rpc_pb2.CallRequest(method="eth_chainId"), metadata=auth, timeout=10).result.string_value
    out["blockNumberJson"] = rpc.Call(rpc_pb2.CallRequest(method="eth_blockNumber", params_json="[]"), metadata=auth, timeout=10).result_json
    heads = rpc.SubscribeNewHeads(rpc_pb2.SubscribeNewHeadsRequest(), metadata=auth, timeout=30)
    numbers = []
    for head in heads:
        numbers.append(head.number)
        if len(numbers) == 2:
            heads.cancel()
            break
    out["heads"] = numbers
    zkt = zkt_pb2_grpc.ZktServiceStub(channel)
    written = zkt.WriteMessage(zkt_pb2.WriteMessageRequest(message="hello from python", wait=True), metadata=auth, timeout=60)
    out["write"] = {"hash": written.hash, "queueId": written.queue_id, "status": written.receipt.status}
    try:
        rpc.Call(rpc_pb2.CallRequest(method="eth_chainId"), metadata=[("authorization", "Bearer cgw_not_a_key")], timeout=10)
        out["badKey"] = "accepted"
    except grpc.RpcError as err:
        out["badKey"] = err.code().name
print(json.dumps(out))
