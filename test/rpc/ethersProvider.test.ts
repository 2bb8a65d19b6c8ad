// ethers JsonRpcProvider against each network's base address answers exactly what anvil itself answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import solc from "solc";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

// anvil's first well-known dev account: used only directly against anvil, to set up state.
const DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Store { uint256 public value = 42; function twice(uint256 x) external pure returns (uint256) { return 2 * x; } }`;

function compileStore(): { abi: unknown[]; bytecode: string } {
  const input = {
    language: "Solidity",
    sources: { "Store.sol": { content: SOURCE } },
    settings: { evmVersion: "paris", outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const c = out.contracts["Store.sol"]!.Store!;
  return { abi: c.abi, bytecode: "0x" + c.evm.bytecode.object };
}

describe("ethers JsonRpcProvider through the gateway", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway({ networks: ["testnet", "mainnet"] });
  });
  afterAll(() => gw?.close());

  for (const [name, chainId] of [
    ["testnet", 20180427n],
    ["mainnet", 101010n],
  ] as const) {
    it(`${name}: chain id, block number, balances and eth_call match anvil`, async () => {
      const net = gw.network(name);
      const viaGateway = new JsonRpcProvider(net.url, undefined, { staticNetwork: true });
      const direct = new JsonRpcProvider(net.upstreamUrls[0], undefined, { staticNetwork: true });
      expect((await viaGateway.getNetwork()).chainId).toBe(chainId);

      const deployer = new Wallet(DEV_KEY, direct);
      const { abi, bytecode } = compileStore();
      const contract = await new ContractFactory(abi as never, bytecode, deployer).deploy();
      await contract.waitForDeployment();
      const address = await contract.getAddress();

      const gwBlock = await viaGateway.getBlockNumber();
      const directBlock = await direct.getBlockNumber();
      expect(Math.abs(gwBlock - directBlock)).toBeLessThanOrEqual(1);

      for (const who of [deployer.address, address, "0x0000000000000000000000000000000000000001"]) {
        expect(await viaGateway.getBalance(who, gwBlock)).toBe(await direct.getBalance(who, gwBlock));
      }
      const read = new (await import("ethers")).Contract(address, abi as never, viaGateway);
      expect(await read.getFunction("value")()).toBe(42n);
      expect(await read.getFunction("twice")(21n)).toBe(42n);
      const call = { to: address, data: read.interface.encodeFunctionData("twice", [7n]) };
      expect(await viaGateway.call(call)).toBe(await direct.call(call));
      expect(await viaGateway.getCode(address)).toBe(await direct.getCode(address));
      viaGateway.destroy();
      direct.destroy();
    });
  }
});
