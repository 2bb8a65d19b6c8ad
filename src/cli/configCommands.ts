// `chain-gateway config check [FILE]` and `chain-gateway config print [FILE]`: the configuration a gateway would
// start with (defaults, the file, the environment), validated without starting anything. check exits 1 naming
// each problem by its path; print shows every setting, secrets masked, with where it came from.
import { ConfigError, leafPaths, resolveConfig, valueAt } from "../config/config.js";

const USAGE = `usage: chain-gateway config check [FILE]   validate FILE (else CONFIG_FILE or ./chain-gateway.config.json) and the environment
       chain-gateway config print [FILE]   the effective configuration, secrets masked, and each setting's source`;

/** A setting whose value is a secret by its name (the master phrase, admin tokens, passwords). */
const SECRET = /^(masterMnemonic|adminTokens)$|secret|password|privateKey/i;

/** A value as printed: a secret setting masked, a URL's password masked. */
function shown(path: string, value: unknown): string {
  if (SECRET.test(path.split(".").at(-1) ?? "")) return value === undefined ? "—" : '"***"';
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "string" ? maskUrl(v) : v)) ?? "—";
}

function maskUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password === "") return text;
    url.password = "***";
    return url.toString();
  } catch {
    return text;
  }
}

/** Runs `config <command> [FILE]`; returns the exit code. */
export function runConfigCommand(args: string[], env: NodeJS.ProcessEnv = process.env, out = process.stdout, err = process.stderr): number {
  const [command, file, ...rest] = args;
  if ((command !== "check" && command !== "print") || rest.length > 0 || file === "--help") {
    (command === "--help" || file === "--help" ? out : err).write(USAGE + "\n");
    return command === "--help" || file === "--help" ? 0 : 2;
  }
  const withFile = file !== undefined ? { ...env, CONFIG_FILE: file } : env;
  let explained: ReturnType<typeof resolveConfig>;
  try {
    explained = resolveConfig(withFile);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    err.write(`invalid configuration (${withFile.CONFIG_FILE ?? "defaults and environment"}):\n${e.problems.map((p) => `  - ${p}\n`).join("")}`);
    return 1;
  }
  const source = explained.file ?? "no file";
  if (command === "check") {
    out.write(`ok: ${source}, networks ${Object.keys(explained.parsed.networks).join(", ")}\n`);
    return 0;
  }
  const rows = leafPaths(explained.parsed).map((path) => {
    const env = explained.fromEnv.get(path);
    const from = env ? `env ${env}` : explained.fromFile.has(path) ? "file" : "default";
    return [path, shown(path, valueAt(explained.parsed, path)), from] as const;
  });
  const width = Math.max(...rows.map(([p]) => p.length));
  out.write(`# effective configuration (${source}); source: default, file or env VARIABLE\n`);
  for (const [path, value, from] of rows) out.write(`${path.padEnd(width)}  ${value}  (${from})\n`);
  return 0;
}
