# chain-gateway: a production image (docs/OPERATIONS.md, "Containers").
# Build stage: the whole install (the bundle is built with esbuild), then only what runs is kept.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The image's own Node runs the gateway: the locked node-linux-* package (a Node 24 for machines without one,
# npm start's) is not carried.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund && rm -rf node_modules/node-linux-* node_modules/.bin/node

# Run stage: Node 24, the bundle and its runtime packages (anvil's own platform build among them), as the
# unprivileged "node" user. State (the embedded store, the master seed, the dev chain) lives in the /data
# volume; with DATABASE_URL the store is PostgreSQL instead.
FROM node:24-bookworm-slim
# A fixed glibc mmap threshold: a buffer of 256 KB or more is its own mapping, unmapped when freed, so what
# large request bodies held goes back to the system (docs/OPERATIONS.md, "Memory after a huge answer").
ENV NODE_ENV=production HOST=0.0.0.0 DATA_DIR=/data MALLOC_MMAP_THRESHOLD_=262144
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8545 8546
# Ready = a node answers and the store takes writes; a load balancer drains a replica on false.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TESTNET_PORT||8545)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains: readiness goes false, requests in flight are answered, broadcasts are flushed (run with
# --init, or compose's init: true, so the signal reaches node as it does outside a container).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--enable-source-maps", "--max-semi-space-size=16", "dist/main.mjs"]
