// Creates a new PGlite data directory (initdb) in a worker thread. initdb's WebAssembly instance keeps ~450 MB
// that the main thread would hold for the life of the gateway; a worker's memory goes away when it exits.
// Plain JS so it loads in a worker under node, tsx and vitest alike.
import { workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

const db = await PGlite.create(workerData.dir);
await db.close();
