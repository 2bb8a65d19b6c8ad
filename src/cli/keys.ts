// Operator CLI for API keys: `npm run keys -- create [--label L] [--rpm N] [--tpd N] [--tpm N] [--allow 0x…,0x…] |
// list [PREFIX] | revoke ID|PREFIX | limits ID|PREFIX [--rpm N] [--tpd N] [--tpm N] [--allow …] | usage ID|PREFIX`.
// On the store itself, with the gateway's config (DATA_DIR / DATABASE_URL), while the gateway runs or not (a
// running gateway sees a change within LOOKUP_CACHE_MS); or, with --admin-url, through a running gateway's admin
// API (the token in ADMIN_TOKEN), where a change applies at once and usage is the gateway's live count.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../config/config.js";
import { openWallets } from "../keys/custody/openWallets.js";
import { createLogger } from "../log/logger.js";
import { openStores } from "../store/openStores.js";
import { GatewayError } from "../errors.js";
import { type KeyCommands, type KeyLimitsChange, showKey, withChanged } from "./keyCommands.js";
import { localKeys } from "./localKeys.js";
import { remoteKeys } from "./remoteKeys.js";

const LIMIT_FLAGS = "[--rpm REQUESTS_PER_MINUTE] [--tpd WRITES_PER_DAY] [--tpm WRITES_PER_30_DAYS] [--allow ADDRESS,ADDRESS…]";
/** What `limits` takes to clear one: `--rpm none`. */
const CLEAR = "none";
const USAGE = `usage: keys [--admin-url URL] create [--label LABEL] ${LIMIT_FLAGS}
       keys [--admin-url URL] list [PREFIX]
       keys [--admin-url URL] revoke ID|PREFIX
       keys [--admin-url URL] limits ID|PREFIX ${LIMIT_FLAGS}   (limits not named keep their values; "none" clears one)
       keys [--admin-url URL] usage ID|PREFIX
--admin-url: a running gateway's address (its admin API; the token in ADMIN_TOKEN)`;

/** A positive integer flag; undefined when absent, null when "none" (cleared). */
function count(name: string, text: string | undefined): number | null | undefined {
  if (text === undefined) return undefined;
  if (text === CLEAR) return null;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new GatewayError("validation", `--${name} must be a positive integer`);
  return n;
}

/** The store-backed commands, saying what is opened (and warning when it is new). */
async function onStore(): Promise<KeyCommands> {
  const config = loadConfig();
  const custody = config.signer.kind === "pkcs11" ? `PKCS#11 token "${config.signer.pkcs11.tokenLabel}"` : undefined;
  // Keys are wallets of the gateway's master seed (or token): a CLI run beside another DATA_DIR makes a second
  // store and seed whose keys the gateway refuses. Say what is opened, and warn when it is new.
  const seedFile = resolve(config.dataDir, "master-seed");
  if (!custody && !process.env.MASTER_MNEMONIC && !existsSync(seedFile)) {
    process.stderr.write(
      `keys: warning: no gateway data in ${resolve(config.dataDir)} yet; a new master seed ` +
        `is made there, and a gateway accepts these keys only with this DATA_DIR${config.databaseUrl ? " and DATABASE_URL" : ""}\n`,
    );
  }
  process.stderr.write(
    `keys: store ${config.databaseUrl ? "PostgreSQL (DATABASE_URL)" : resolve(config.dataDir, "journal.sqlite")}, ` +
      `${custody ? `wallets in the ${custody}` : `seed ${process.env.MASTER_MNEMONIC ? "MASTER_MNEMONIC" : seedFile}`}\n`,
  );
  const stores = await openStores({ dataDir: config.dataDir, role: "tool", ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}) });
  return localKeys(stores, await openWallets(config, createLogger("warn"), stores));
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      label: { type: "string" },
      rpm: { type: "string" },
      tpd: { type: "string" },
      tpm: { type: "string" },
      allow: { type: "string" },
      "admin-url": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, arg] = positionals;
  if (values.help || command === "help") {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const needsArg = command === "revoke" || command === "usage" || command === "limits";
  if (!command || !["create", "list", "revoke", "usage", "limits"].includes(command) || (needsArg && !arg)) {
    process.stderr.write(USAGE + "\n");
    return 2;
  }
  const limits: KeyLimitsChange = {
    requestsPerMinute: count("rpm", values.rpm),
    writesPerDay: count("tpd", values.tpd),
    writesPerMonth: count("tpm", values.tpm),
    allowedTargets: values.allow === CLEAR ? null : values.allow?.split(",").filter(Boolean),
  };
  const adminUrl = values["admin-url"];
  if (adminUrl !== undefined && !process.env.ADMIN_TOKEN) throw new GatewayError("validation", "--admin-url needs the admin token in ADMIN_TOKEN");
  const keys = adminUrl !== undefined ? remoteKeys(adminUrl, process.env.ADMIN_TOKEN!) : await onStore();
  try {
    if (command === "create") {
      const { apiKey, key } = await keys.create(values.label, withChanged({}, limits));
      process.stdout.write(`api key (shown once): ${apiKey}\nid: ${key.id}\nwallet: ${key.wallet}\n`);
    } else if (command === "list") {
      for (const k of await keys.list(arg ?? "")) process.stdout.write(showKey(k) + "\n");
    } else if (command === "usage") {
      process.stdout.write(await keys.usage(arg!));
    } else if (command === "limits") {
      process.stdout.write("limits set: " + showKey(await keys.setLimits(arg!, limits)) + "\n");
    } else {
      process.stdout.write("revoked: " + showKey(await keys.revoke(arg!)) + "\n");
    }
    return 0;
  } finally {
    await keys.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`keys: ${err instanceof GatewayError || err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
