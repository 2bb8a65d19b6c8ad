// The configuration changed while the gateway runs (SIGHUP, AdminService.ReloadConfig): the file and the
// environment are read and validated again, whole. The settings that can change live go to the parts that
// hold them; any other setting that changed refuses the whole reload, naming it (ports, the store, the signer
// and the rest need a restart). An invalid file changes nothing: the old configuration stays.
import { GatewayError } from "../errors.js";
import { ConfigError, type GatewayConfig, leafPaths, type ParsedConfig, valueAt } from "./config.js";

/** What can change without a restart. */
const LIVE: readonly RegExp[] = [
  /^logLevel$/,
  /^trustedProxies$/,
  /^portalKeyOrigins$/,
  /^webhooks\./,
  /^rateLimit\./,
  /^methodWeights(\.|$)/,
  /^methodPolicies(\.|$)/,
  /^networks\.\w+\.(upstreams|cordoned|weights)$/,
  /^logsMaxBlockRange$/,
  /^logsMaxResults$/,
];

/** Applies a reloaded configuration's live settings (`changed`: the dotted paths that changed). */
export type ReloadApplier = (next: ParsedConfig, changed: readonly string[]) => void;

export interface ReloadOutcome {
  /** The settings that changed and were applied (none: the file said what runs already). */
  changed: string[];
}

/** The configuration as the file and environment state it, networks keyed by name (config.ts's parsed form). */
export function keyedConfig(config: GatewayConfig): ParsedConfig {
  const { networks, ...rest } = config;
  return { ...rest, networks: Object.fromEntries(networks.map(({ name: _name, ...n }) => [_name, n])) } as ParsedConfig;
}

/** Dotted paths whose values differ between two configurations. */
export function changedPaths(before: ParsedConfig, after: ParsedConfig): string[] {
  const paths = new Set([...leafPaths(before), ...leafPaths(after)]);
  return [...paths].filter((p) => JSON.stringify(valueAt(before, p)) !== JSON.stringify(valueAt(after, p))).sort();
}

export class ConfigReloader {
  private readonly appliers: ReloadApplier[] = [];

  constructor(
    private current: ParsedConfig,
    /** Reads and validates the configuration again (throws ConfigError); undefined: started from no file. */
    private readonly read: (() => ParsedConfig) | undefined,
    private readonly counted: (outcome: "applied" | "invalid" | "refused" | "partial") => void = () => undefined,
  ) {}

  onReload(apply: ReloadApplier): void {
    this.appliers.push(apply);
  }

  reload(): ReloadOutcome {
    if (!this.read) throw new GatewayError("conflict", "this gateway was not started from a configuration it can read again");
    let next: ParsedConfig;
    try {
      next = this.read();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.counted("invalid");
      throw new GatewayError("validation", `the configuration was not reloaded (the running one stays): ${err.problems.join("; ")}`, {
        details: { problems: err.problems },
      });
    }
    const changed = changedPaths(this.current, next);
    const fixed = changed.filter((p) => !LIVE.some((live) => live.test(p)) || embeddedSwapped(this.current, next, p));
    if (fixed.length > 0) {
      this.counted("refused");
      throw new GatewayError(
        "conflict",
        `the configuration was not reloaded: ${fixed.join(", ")} cannot change without a restart (live: the log level, trusted proxies, the key portal's CORS origins, webhook settings, rate limits, method weights and policies, a network's upstreams, cordons and weights, getLogs caps)`,
        { details: { fixed } },
      );
    }
    // Every part is told, even after one failed: a part that could not take its settings must not leave the
    // others on the old ones. The new configuration is the running one from here; the failures are reported.
    const failures: string[] = [];
    for (const apply of this.appliers) {
      try {
        apply(next, changed);
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
      }
    }
    this.current = next;
    if (failures.length > 0) {
      this.counted("partial");
      throw new GatewayError("internal", `the configuration was reloaded, but not every part took it: ${failures.join("; ")}`, {
        details: { changed, failures },
      });
    }
    this.counted("applied");
    return { changed };
  }
}

/** A network that runs its embedded node (no upstreams) cannot be given upstreams live, nor lose them. */
function embeddedSwapped(before: ParsedConfig, after: ParsedConfig, path: string): boolean {
  const m = /^networks\.(\w+)\.upstreams$/.exec(path);
  if (!m) return false;
  const was = (valueAt(before, path) as string[] | undefined) ?? [];
  const now = (valueAt(after, path) as string[] | undefined) ?? [];
  return was.length === 0 || now.length === 0;
}
