// Operator CLI for API keys: `npm run keys -- create [--label L] [--rpm N] [--tpd N] [--allow 0x…,0x…] | list [PREFIX] | revoke ID|PREFIX`.
// Uses the same config as the gateway (DATA_DIR / DATABASE_URL), and works while the gateway runs: on the
// embedded SQLite file as on PostgreSQL (a revocation reaches a running gateway within LOOKUP_CACHE_MS).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../config/config.js";
import { ApiKeys, type ApiKeyInfo } from "../keys/apiKeys.js";
import { MasterSeed } from "../keys/masterSeed.js";
import { openStores } from "../store/openStores.js";
import { GatewayError } from "../errors.js";

const USAGE = `usage: keys create [--label LABEL] [--rpm REQUESTS_PER_MINUTE] [--tpd TRANSACTIONS_PER_DAY] [--allow ADDRESS,ADDRESS…]
       keys list [PREFIX]
       keys revoke ID|PREFIX
       keys usage ID|PREFIX`;

function show(k: ApiKeyInfo): string {
  const limits = [
    k.requestsPerMinute ? `${k.requestsPerMinute}/min` : "",
    k.transactionsPerDay ? `${k.transactionsPerDay} tx/day` : "",
    k.allowedTargets ? `writes only to ${k.allowedTargets.join(",")}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return [k.prefix + "…", k.id, k.walletAddress, k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : "active", JSON.stringify(k.label), limits]
    .filter(Boolean)
    .join("  ");
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { label: { type: "string" }, rpm: { type: "string" }, tpd: { type: "string" }, allow: { type: "string" } },
  });
  const [command, arg] = positionals;
  if (!command || !["create", "list", "revoke", "usage"].includes(command) || ((command === "revoke" || command === "usage") && !arg)) {
    process.stderr.write(USAGE + "\n");
    return 2;
  }
  const config = loadConfig();
  // Keys are wallets of the gateway's master seed: a CLI run beside another DATA_DIR makes a second store and
  // seed whose keys the gateway refuses. Say what is opened, and warn when it is new.
  const seedFile = resolve(config.dataDir, "master-seed");
  if (!process.env.MASTER_MNEMONIC && !existsSync(seedFile)) {
    process.stderr.write(
      `keys: warning: no gateway data in ${resolve(config.dataDir)} yet; a new master seed ` +
        `is made there, and a gateway accepts these keys only with this DATA_DIR${config.databaseUrl ? " and DATABASE_URL" : ""}\n`,
    );
  }
  process.stderr.write(
    `keys: store ${config.databaseUrl ? "PostgreSQL (DATABASE_URL)" : resolve(config.dataDir, "journal.sqlite")}, ` +
      `seed ${process.env.MASTER_MNEMONIC ? "MASTER_MNEMONIC" : seedFile}\n`,
  );
  const stores = await openStores({ dataDir: config.dataDir, role: "tool", ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}) });
  try {
    const keys = new ApiKeys(stores.keys, MasterSeed.load(config.dataDir));
    if (command === "create") {
      const { apiKey, info } = await keys.create({
        ...(values.label !== undefined ? { label: values.label } : {}),
        ...(values.rpm !== undefined ? { requestsPerMinute: Number(values.rpm) } : {}),
        ...(values.tpd !== undefined ? { transactionsPerDay: Number(values.tpd) } : {}),
        ...(values.allow !== undefined ? { allowedTargets: values.allow.split(",").filter(Boolean) } : {}),
      });
      process.stdout.write(`api key (shown once): ${apiKey}\nid: ${info.id}\nwallet: ${info.walletAddress}\n`);
    } else if (command === "list") {
      for (const k of await keys.list(arg ?? "")) process.stdout.write(show(k) + "\n");
    } else if (command === "usage") {
      const matches = (await keys.get(arg!)) ? [(await keys.get(arg!))!] : await keys.list(arg!);
      if (matches.length !== 1) throw new GatewayError("validation", `"${arg}" matches ${matches.length} keys; give the id or a longer prefix`);
      const k = matches[0]!;
      const used = await stores.journal.countBySignerSince(k.walletAddress, new Date(Date.now() - 86_400_000));
      process.stdout.write(
        `${show(k)}\ntransactions in the last 24 h: ${used}${k.transactionsPerDay ? ` of ${k.transactionsPerDay}` : " (no daily quota)"}\n` +
          `requests: ${k.requestsPerMinute ? `${k.requestsPerMinute}/min` : "the network default"} (live counts: X-RateLimit-* response headers)\n`,
      );
    } else {
      process.stdout.write("revoked: " + show(await keys.revoke(arg!)) + "\n");
    }
    return 0;
  } finally {
    await stores.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`keys: ${err instanceof GatewayError || err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
