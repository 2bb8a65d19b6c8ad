// A kept dev chain is the same chain at every start (#52). anvil, loaded from a dump it made after a load of its
// own, can report another block 0 (the dump holds the genesis it made at that start beside the first one), so
// the genesis it reports flips from one restart to the next. The journal is keyed by the chain's genesis: a
// flip keyed it anew, and every write journaled before answered 404 and its unfinished writes were stranded.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startGatewayProcess, type GatewayProcess } from "../helpers/gatewayProcess.js";
import { postJson } from "../helpers/gateway.js";

describe("a dev chain kept across several restarts", () => {
  it("answers a write's queueId after each of four restarts", { timeout: 240_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-genesis-"));
    const env = { DATA_DIR: dataDir, BLOCK_TIME: "0.5", EMBEDDED_STATE: "true" };
    let gw: GatewayProcess = await startGatewayProcess(env);
    const first = (await postJson(gw.url + "/zkt/try-it-out", { arguments: "kept", wait: true })).json as { queueId: string };
    const statuses: string[] = [];
    try {
      for (let restart = 0; restart < 4; restart++) {
        await new Promise((r) => setTimeout(r, 2_500)); // past the 2 s dump interval
        gw.child.kill("SIGTERM");
        await gw.exited;
        gw = await startGatewayProcess(env);
        const res = await fetch(`${gw.url}/zkt/transactions/${first.queueId}`);
        statuses.push(res.status === 200 ? ((await res.json()) as { status: string }).status : `HTTP ${res.status}`);
        // A write of this start, so the next dump holds blocks of this start too.
        expect((await postJson(gw.url + "/zkt/try-it-out", { arguments: `start ${restart}`, wait: true })).status).toBe(200);
      }
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
    expect(statuses).toEqual(["completed", "completed", "completed", "completed"]);
  });
});
