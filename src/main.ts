// `npm start`: runs the gateway until SIGINT/SIGTERM (exit 0) or a fatal error (exit 1, for a supervisor to
// restart it), then stops every embedded node it started.
import { ConfigError, loadConfig } from "./config/config.js";
import { startGateway, type Gateway } from "./gateway.js";
import { createLogger } from "./log/logger.js";

async function main(): Promise<void> {
  let config;
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
  let gateway: Gateway | undefined;
  let stopping = false;
  let fatalDuringStart = false;
  const stop = (reason: string, exitCode = 0): void => {
    if (stopping) return;
    if (!gateway) return void (fatalDuringStart = true);
    stopping = true;
    log.info("stopping", { reason });
    gateway.close().then(
      () => process.exit(exitCode),
      (err: unknown) => {
        log.error("stop failed", { error: String(err) });
        process.exit(1);
      },
    );
  };
  gateway = await startGateway(config, { log, onFatal: () => stop("fatal error", 1) });
  if (fatalDuringStart) return stop("fatal error", 1);
  for (const n of gateway.networks) {
    process.stdout.write(`${n.config.name} (chain id ${n.config.chainId}): ${n.url}  <- upstream ${n.upstreamUrls.length === 1 && n.upstreamUrls[0]?.startsWith("http://127.0.0.1") && n.config.upstreams.length === 0 ? "embedded anvil" : n.upstreamUrls.length + " node(s)"}\n`);
  }
  process.stdout.write(`try-it-out signer: ${gateway.publicSignerAddress}\n`);
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((err: unknown) => {
  process.stderr.write(`chain-gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
