// PGlite, the embedded store of earlier versions (read once by pgliteTakeover.ts), on a thread of its own:
// PostgreSQL compiled to WebAssembly runs synchronously and holds ~250 MB, which go when the thread exits.
// Messages in:
// {id, op: "query", sql, params, tx?} | {id, op: "begin"} | {id, op: "commit"|"rollback", tx} | {id, op: "close"};
// out: {id, rows} | {id, tx} | {id, error: {message, code}}. One transaction at a time (PGlite's own rule):
// queries outside it wait for it, as on the main thread.
// Plain JS so it loads in a worker under node, tsx and vitest alike.
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

const db = await PGlite.create(workerData.dir, { postgresqlconf: workerData.postgresqlconf });
/** Open transactions by id: the callback's pending queries and how it ends. */
const open = new Map();
let nextTx = 1;
/** tx → the id of the commit/rollback message awaiting its end. */
const endId = new Map();

const fail = (id, err) => parentPort.postMessage({ id, error: { message: err?.message ?? String(err), code: err?.code } });

parentPort.on("message", (msg) => {
  const { id, op } = msg;
  if (op === "query") {
    const target = msg.tx ? open.get(msg.tx)?.tx : db;
    if (!target) return fail(id, new Error("transaction is closed"));
    target.query(msg.sql, msg.params).then((r) => parentPort.postMessage({ id, rows: r.rows }), (err) => fail(id, err));
  } else if (op === "begin") {
    const tx = nextTx++;
    let end;
    const ended = new Promise((resolve) => (end = resolve));
    db.transaction(async (t) => {
      open.set(tx, { tx: t, end });
      parentPort.postMessage({ id, tx });
      const how = await ended;
      if (how.op === "rollback") throw Object.assign(new Error("rolled back"), { rollback: true });
    }).then(
      () => {
        open.delete(tx);
        parentPort.postMessage({ id: endId.get(tx), rows: [] });
      },
      (err) => {
        open.delete(tx);
        if (err?.rollback) parentPort.postMessage({ id: endId.get(tx), rows: [] });
        else if (endId.has(tx)) fail(endId.get(tx), err);
        else fail(id, err);
      },
    );
  } else if (op === "commit" || op === "rollback") {
    const t = open.get(msg.tx);
    if (!t) return fail(id, new Error("transaction is closed"));
    endId.set(msg.tx, id);
    t.end({ op });
  } else if (op === "close") {
    db.close().then(() => parentPort.postMessage({ id, rows: [] }), (err) => fail(id, err));
  }
});
parentPort.postMessage({ ready: true });
