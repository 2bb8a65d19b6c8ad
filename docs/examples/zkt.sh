#!/usr/bin/env bash
# The three ZKT operations with curl: a message, an ERC-20 deploy, a read and a write that waits for mining.
#   GATEWAY_URL=http://127.0.0.1:8545 bash docs/examples/zkt.sh        (uses /zkt/try-it-out; API_KEY=… for your key)
set -euo pipefail
BASE="${GATEWAY_URL:-http://127.0.0.1:8545}/zkt/${API_KEY:-try-it-out}"
post() { curl -sS -X POST "$BASE" -H 'content-type: application/json' -d "$1"; echo; }

post '{"arguments":"hello from curl"}'

DEPLOY=$(post '{"code":"// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\nimport \"@openzeppelin/contracts/token/ERC20/ERC20.sol\";\ncontract CurlToken is ERC20 { constructor(uint256 s) ERC20(\"Curl\", \"CRL\") { _mint(msg.sender, s); } }","arguments":["1000"],"id":"deploy"}')
echo "$DEPLOY"
TOKEN=$(echo "$DEPLOY" | sed -E 's/.*"contractAddress":"(0x[0-9a-fA-F]{40})".*/\1/')

post "{\"to\":\"$TOKEN\",\"abi\":[\"function totalSupply() view returns (uint256)\"],\"method\":\"totalSupply\",\"arguments\":[],\"id\":1}"
post "{\"to\":\"$TOKEN\",\"abi\":[\"function transfer(address to, uint256 value) returns (bool)\",\"event Transfer(address indexed from, address indexed to, uint256 value)\"],\"method\":\"transfer\",\"arguments\":[\"0x000000000000000000000000000000000000dEaD\",\"10\"],\"wait\":true,\"id\":2}"
