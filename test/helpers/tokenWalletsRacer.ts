// One "replica" for the token start race (pkcs11StartRace.test.ts): it opens the shared store and waits;
// on a line on stdin it opens the token's wallets, makes wallet 7 ready, prints what it signs as, and exits.
// Several started at once and told "go" together reach an empty token in the same millisecond.
import { createInterface } from "node:readline";
import { loadConfig } from "../../src/config/config.js";
import { openWallets } from "../../src/keys/custody/openWallets.js";
import { createLogger } from "../../src/log/logger.js";
import { openStores } from "../../src/store/openStores.js";

// Configured as a replica is: SIGNER=pkcs11, PKCS11_*, DATABASE_URL, DATA_DIR from the environment.
const config = loadConfig();
const stores = await openStores({ dataDir: config.dataDir, role: "tool", databaseUrl: config.databaseUrl! });
process.stdout.write("waiting\n");
await new Promise<void>((go) => createInterface({ input: process.stdin }).once("line", () => go()));
const wallets = await openWallets(config, createLogger("error"), stores);
await wallets.ready(7);
process.stdout.write(`${JSON.stringify({ public: wallets.signer(0).address, seventh: wallets.signer(7).address, callbackRoot: wallets.callbackRoot })}\n`);
await stores.close();
process.exit(0);
