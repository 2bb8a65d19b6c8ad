#!/usr/bin/env bash
# Get a free API key (shown once) with its wallet address and endpoints.
#   GATEWAY_URL=http://127.0.0.1:8545 bash docs/examples/getApiKey.sh
set -euo pipefail
curl -sS -X POST "${GATEWAY_URL:-http://127.0.0.1:8545}/portal/keys" -H 'content-type: application/json' -d '{"label":"my app"}'
echo
