// anvil rewrites its state file in place: a crash mid-write leaves a file it will not start on. The embedded
// node keeps a whole copy beside it and starts on that copy instead; with no copy, on a new chain.
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EmbeddedNode, startEmbeddedNode } from "../../src/chain/embeddedNode.js";
import type { StateRestored } from "../../src/chain/stateFileCopy.js";
import { rpc } from "../helpers/gateway.js";

const MARKED = "0x00000000000000000000000000000000000c0ffe";

describe("the embedded chain's state file", () => {
  const nodes: EmbeddedNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop()));
  });
  const start = async (stateFile: string, restored: StateRestored[]) => {
    const node = await startEmbeddedNode({
      chainId: 20180427,
      blockTimeSeconds: 0.25,
      feeMode: "zero",
      stateFile,
      stateIntervalSeconds: 1,
      goodCopyIntervalMs: 200,
      onStateRestored: (r) => restored.push(r),
    });
    nodes.push(node);
    return node;
  };

  it("torn by a crash mid-dump: the node starts on the last whole copy, and the torn file is kept aside", async () => {
    const dir = mkdtempSync(join(tmpdir(), "state-copy-"));
    const stateFile = join(dir, "chain.json");
    const restored: StateRestored[] = [];
    const first = await start(stateFile, restored);
    await rpc(first.url, "anvil_setBalance", [MARKED, "0xc0ffee"]);
    // The copy is written at start and every 200 ms here: wait for one that holds the balance.
    await expect.poll(() => existsSync(`${stateFile}.good`) && readFileSync(`${stateFile}.good`, "utf8").includes("c0ffe"), { timeout: 10_000 }).toBe(true);
    await first.stop();
    nodes.length = 0;
    expect(JSON.parse(readFileSync(`${stateFile}.good`, "utf8"))).toBeTypeOf("object");
    // What a kill mid-write leaves: the first part of the file.
    truncateSync(stateFile, Math.floor(statSync(stateFile).size / 2));

    const second = await start(stateFile, restored);
    expect(await rpc<string>(second.url, "eth_getBalance", [MARKED, "latest"])).toBe("0xc0ffee");
    expect(restored).toEqual([{ restored: "copy", tornAside: expect.stringContaining(`${stateFile}.torn-`) }]);
    expect(statSync(restored[0]!.tornAside).size).toBeGreaterThan(0);
    // Once stopped (a copy may be mid-write while it runs, every 200 ms here), no temporary file is left.
    await second.stop();
    nodes.length = 0;
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("torn with no whole copy (an empty file): the node starts on a new chain instead of not at all", async () => {
    const dir = mkdtempSync(join(tmpdir(), "state-copy-"));
    const stateFile = join(dir, "chain.json");
    writeFileSync(stateFile, "");
    const restored: StateRestored[] = [];
    const node = await start(stateFile, restored);
    expect(await rpc<string>(node.url, "eth_chainId")).toBe("0x133edcb");
    expect(restored).toEqual([{ restored: "fresh", tornAside: expect.stringContaining(`${stateFile}.torn-`) }]);
  });
});
