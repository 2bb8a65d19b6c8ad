// A kept dev chain killed with everything (gateway and anvil, no exit dump) while anvil was rewriting its state
// file: the file is torn, the next start takes the whole copy kept beside it, which is older than the journal,
// and every write the journal holds as completed is on the chain again, once, under the hash it was answered
// with.
import { mkdtempSync, readdirSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startGatewayProcess } from "../helpers/gatewayProcess.js";
import { descendants } from "../helpers/processes.js";
import { postJson, rpc } from "../helpers/gateway.js";

const SOURCE = "pragma solidity ^0.8.20;\ncontract Counter { uint256 public n; function inc() public { n += 1; } }";
const ABI = [
  { type: "function", name: "n", inputs: [], outputs: [{ name: "", type: "uint256" }], stateMutability: "view" },
  { type: "function", name: "inc", inputs: [], outputs: [], stateMutability: "nonpayable" },
];

function signalIfThere(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

describe("completed writes a restarted dev chain no longer has", () => {
  it("are sent again from the journal after a start on an older whole copy of a torn state file", { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-forgotten-"));
    const env = { DATA_DIR: dataDir, BLOCK_TIME: "0.5", EMBEDDED_STATE: "true" };
    const count = async (url: string, to: string) =>
      ((await postJson(url + "/zkt/try-it-out", { to, abi: ABI, method: "n", arguments: [] })).json as { output?: string[] }).output?.[0];

    let gw = await startGatewayProcess(env);
    // The whole copy is written at start and every 10 s: it holds few or none of these writes.
    const deployed = (await postJson(gw.url + "/zkt/try-it-out", { code: SOURCE })).json as { contractAddress: string; queueId: string; hash: string };
    const to = deployed.contractAddress;
    const writes: { queueId: string; hash: string }[] = [deployed];
    for (let i = 0; i < 3; i++) {
      const res = (await postJson(gw.url + "/zkt/try-it-out", { to, abi: ABI, method: "inc", arguments: [], wait: true })).json as {
        queueId: string;
        hash: string;
      };
      writes.push(res);
    }
    expect(await count(gw.url, to)).toBe("3");
    const lastWriteAt = Date.now();

    // Everything dies at once (no exit dump), and the state file is left as a kill mid-write leaves it.
    // Frozen first, so none of them (the watchdog, anvil's exit dump) acts on another's death.
    const tree = [gw.child.pid!, ...descendants(gw.child.pid!)];
    for (const signal of ["SIGSTOP", "SIGKILL"] as const) for (const pid of tree) signalIfThere(pid, signal);
    await gw.exited;
    const stateFile = join(dataDir, "chain-testnet.json");
    truncateSync(stateFile, Math.floor(statSync(stateFile).size / 2));
    // Written every 10 s: on a slow run it may already hold the writes, and then there is nothing to send again.
    const copyIsOlder = statSync(`${stateFile}.good`).mtimeMs < lastWriteAt - 1_000;

    gw = await startGatewayProcess(env);
    try {
      expect(gw.log()).toMatch(/state file was torn/);
      expect(readdirSync(dataDir).some((f) => f.startsWith("chain-testnet.json.torn-"))).toBe(true);
      // The deploy and every inc come back: same contract address, same hashes (the journal's signed bytes).
      await expect.poll(() => count(gw.url, to), { timeout: 60_000, interval: 500 }).toBe("3");
      const statusOf = async (queueId: string) => (await (await fetch(`${gw.url}/zkt/transactions/${queueId}`)).json()) as { status: string };
      for (const w of writes) {
        // Completed again once confirmed (two blocks), which can be after the count reads 3.
        await expect.poll(async () => (await statusOf(w.queueId)).status, { timeout: 10_000 }).toBe("completed");
        expect(await statusOf(w.queueId)).toMatchObject({ transactionHash: w.hash });
        expect(await rpc(gw.url, "eth_getTransactionReceipt", [w.hash])).toMatchObject({ status: "0x1" });
      }
      if (copyIsOlder) expect(gw.log()).toMatch(/sent again/);
    } finally {
      gw.child.kill("SIGTERM");
      await gw.exited;
    }
  });
});
