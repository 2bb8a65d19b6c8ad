// Where the embedded node's anvil comes from (#53): ANVIL_PATH, else the platform package npm installed (no
// override maps another platform's build onto it), else the copy @foundry-rs/anvil's install script fetched,
// else anvil on PATH. Its port can be pinned.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { anvilBinaryPath, startEmbeddedNode } from "../../src/chain/embeddedNode.js";
import { freePort } from "../helpers/anvilProcess.js";
import { startTestGateway } from "../helpers/gateway.js";

describe("the anvil binary", () => {
  it("is this platform's own package, and runs", () => {
    const path = anvilBinaryPath({});
    const arch = process.arch === "x64" ? "amd64" : process.arch;
    expect(path).toContain(`@foundry-rs/anvil-${process.platform}-${arch}/bin/anvil`);
    expect(execFileSync(path, ["--version"], { encoding: "utf8" })).toMatch(/anvil/i);
  });

  it("ANVIL_PATH wins, and a wrong one says so", () => {
    const real = anvilBinaryPath({});
    expect(anvilBinaryPath({ ANVIL_PATH: real })).toBe(real);
    expect(() => anvilBinaryPath({ ANVIL_PATH: "/nowhere/anvil" })).toThrow(/ANVIL_PATH is set but \/nowhere\/anvil does not exist/);
  });
});

describe("the embedded node's port", () => {
  it("can be pinned (EMBEDDED_NODE_PORT), and a taken one is said at once", async () => {
    const port = await freePort();
    const gw = await startTestGateway({ mutate: (c) => (c.networks[0]!.embeddedNodePort = port) });
    try {
      expect(gw.network("testnet").upstreamUrls).toEqual([`http://127.0.0.1:${port}`]);
      const second = await startEmbeddedNode({ chainId: 20180427, blockTimeSeconds: 1, feeMode: "zero", port }).catch((e: unknown) => e);
      expect(second).toBeInstanceOf(Error);
    } finally {
      await gw.close();
    }
  });
});
