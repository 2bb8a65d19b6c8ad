// `npm start`: runs the gateway until SIGINT/SIGTERM (exit 0; 1 if stopping failed), then stops every
// embedded node it started.
import { runConfigCommand } from "./cli/configCommands.js";
import { ConfigError, loadConfig, resolveConfig, type GatewayConfig } from "./config/config.js";
import { startGateway, type Gateway } from "./gateway.js";
import { createLogger } from "./log/logger.js";
import { startTracing } from "./trace/tracing.js";

async function main(): Promise<void> {
  // `chain-gateway config check|print [FILE]`: the configuration, checked or shown, nothing started.
  if (process.argv[2] === "config") process.exit(runConfigCommand(process.argv.slice(3)));
  let config: GatewayConfig;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + "\n");
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  // Node 24 may come from the locked node-linux-* package (npm scripts put it first on PATH): which one ran.
  log.info("starting", { node: process.version });
  let stopping = false;
  // Traces when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set; nothing otherwise.
  const tracing = startTracing();
  const gateway: Gateway = await startGateway(config, { log, rereadConfig: () => resolveConfig().parsed });
  // SIGHUP: the configuration read again; what can change live is applied, anything else is refused whole.
  process.on("SIGHUP", () => {
    try {
      gateway.reload();
    } catch (err) {
      log.error("configuration not reloaded", { error: (err as Error).message });
    }
  });
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { reason });
    gateway
      .close()
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          log.error("stop failed", { error: String(err) });
          process.exit(1);
        },
      );
  };
  for (const n of gateway.networks) {
    const embedded = n.config.upstreams.length === 0 && n.upstreamUrls.length === 1 && n.upstreamUrls[0]?.startsWith("http://127.0.0.1");
    process.stdout.write(
      `${n.config.name} (chain id ${n.config.chainId}): ${n.url}  <- upstream ${embedded ? "embedded anvil" : n.upstreamUrls.length + " node(s)"}\n`,
    );
  }
  process.stdout.write(`try-it-out signer: ${gateway.publicSignerAddress}\n`);
  if (gateway.networks[0]) process.stdout.write(`developer portal (free API keys, ZKT console) at ${gateway.networks[0].url}/portal\n`);
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((err: unknown) => {
  process.stderr.write(`chain-gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
