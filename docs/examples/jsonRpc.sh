#!/usr/bin/env bash
# JSON-RPC with curl: a call, a batch, a custom platform_ method, and a refused write on the public path.
#   GATEWAY_URL=http://127.0.0.1:8545 bash docs/examples/jsonRpc.sh
set -euo pipefail
URL="${GATEWAY_URL:-http://127.0.0.1:8545}"
rpc() { curl -sS -X POST "$URL/" -H 'content-type: application/json' -d "$1"; echo; }

rpc '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
rpc '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":2,"method":"net_version","params":[]}]'
rpc '{"jsonrpc":"2.0","id":3,"method":"platform_getSupportedTokens","params":[]}'
rpc '{"jsonrpc":"2.0","id":4,"method":"eth_sendRawTransaction","params":["0x00"]}'
