// Fees detected from the node (#65): a gateway pointed at an anvil with its default fees and no fee setting
// kept feeMode zero — eth_gasPrice 0x0 while the node said 0x77359400, every ZKT write refused by the node, a
// waited write answered 503 "not mined in time" 60 s after its status said error. Now FEE_MODE auto (the
// default) follows the node, an explicit zero against it refuses to start, and a refusal is answered at once.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { feeModeFor } from "../../src/chain/feeRegime.js";
import type { Gateway } from "../../src/gateway.js";
import { freePort, kill9, startAnvil } from "../helpers/anvilProcess.js";
import { type FaultyUpstream, startFaultyUpstream } from "../helpers/faultyUpstream.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";

describe("the fee regime, decided", () => {
  it("auto follows the node; zero against a node that charges is refused with the reason; market stays", () => {
    expect(feeModeFor("auto", { gasPrice: 0n, baseFee: 0n })).toBe("zero");
    expect(feeModeFor("auto", { gasPrice: 0n, baseFee: undefined })).toBe("zero");
    expect(feeModeFor("auto", { gasPrice: 2_000_000_000n, baseFee: 1_000_000_000n })).toBe("market");
    expect(feeModeFor("auto", { gasPrice: 0n, baseFee: 7n })).toBe("market");
    // anvil --gas-price 0 --base-fee 0 answers eth_gasPrice 1 gwei (a tip) and takes zero-fee writes.
    expect(feeModeFor("auto", { gasPrice: 1_000_000_000n, baseFee: 0n })).toBe("zero");
    // Before London: the price decides.
    expect(feeModeFor("auto", { gasPrice: 1n, baseFee: undefined })).toBe("market");
    expect(feeModeFor("market", { gasPrice: 0n, baseFee: 0n })).toBe("market");
    expect(() => feeModeFor("zero", { gasPrice: 2_000_000_000n, baseFee: 1_000_000_000n })).toThrow(
      /FEE_MODE is zero but the node charges fees.*FEE_MODE=market/,
    );
  });
});

describe("in front of a node that charges fees, nothing configured", () => {
  let anvil: ChildProcess;
  let node: string;
  let proxy: FaultyUpstream;
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    node = `http://127.0.0.1:${port}`;
    // anvil as it comes: EIP-1559 fees, a base fee of 1 gwei.
    anvil = await startAnvil(port, undefined, undefined, undefined, "node");
    proxy = await startFaultyUpstream(node);
    gw = await startTestGateway({
      mutate: (c) => {
        c.networks[0]!.upstreams = [proxy.url];
        c.receiptWaitMs = 60_000;
      },
    });
    url = gw.network("testnet").url;
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    proxy?.close();
    if (anvil) await kill9(anvil);
  });

  it("is run with market fees: eth_gasPrice is the node's; a message, a deploy and a contract write are mined", { timeout: 120_000 }, async () => {
    expect(gw.network("testnet").config.feeMode).toBe("market");
    // The node's price, not 0x0 (it moves with the base fee from block to block: compared within 15 %).
    const [ours, theirs] = [BigInt(await rpc<string>(url, "eth_gasPrice")), BigInt(await rpc<string>(node, "eth_gasPrice"))];
    expect(ours > 0n).toBe(true);
    expect(Number(ours - theirs) / Number(theirs)).toBeLessThan(0.15);
    expect(Number(theirs - ours) / Number(theirs)).toBeLessThan(0.15);
    // The gateway's wallets pay fees here: funded as an operator would.
    const key = await gw.keys.create();
    for (const address of [gw.publicSignerAddress, key.info.walletAddress]) await rpc(node, "anvil_setBalance", [address, "0x56BC75E2D63100000"]);
    const message = await postJson(`${url}/zkt/try-it-out`, { arguments: "fees paid", wait: true });
    expect(message.json, message.text).toMatchObject({ success: true, receipt: { status: "success" } });
    const code = `// SPDX-License-Identifier: MIT\npragma solidity 0.8.24;\ncontract Box {\n  uint256 public value;\n  function set(uint256 v) public { value = v; }\n}`;
    const deployed = await postJson(`${url}/zkt/${key.apiKey}`, { code, wait: true });
    expect(deployed.status, deployed.text).toBe(200);
    const to = (deployed.json as { contractAddress: string }).contractAddress;
    const abi = [{ type: "function", name: "set", inputs: [{ name: "v", type: "uint256" }], outputs: [], stateMutability: "nonpayable" }];
    const write = await postJson(`${url}/zkt/${key.apiKey}`, { to, abi, method: "set", arguments: ["7"], wait: true });
    expect(write.json, write.text).toMatchObject({ success: true, receipt: { status: "success" } });
  });

  it("a waited write the node refuses for good is answered with that refusal within 3 s", { timeout: 60_000 }, async () => {
    proxy.reject(1);
    const t0 = Date.now();
    const res = await postJson(`${url}/zkt/try-it-out`, { arguments: "refused", wait: true });
    const ms = Date.now() - t0;
    expect(res.status, res.text).toBe(422);
    expect(res.json).toMatchObject({ success: false, error: expect.stringMatching(/rejected the transaction: invalid transaction: refused by the test/) });
    expect(ms).toBeLessThan(3_000);
  });

  it("an explicit FEE_MODE zero against it refuses to start, saying why", { timeout: 60_000 }, async () => {
    await expect(
      startTestGateway({
        mutate: (c) => {
          c.networks[0]!.upstreams = [node];
          c.networks[0]!.feeMode = "zero";
        },
      }),
    ).rejects.toThrow(/FEE_MODE is zero but the node charges fees/);
  });
});
