// ZKT over plain fetch against embedded anvil: messages, an ERC-20 deployed from source (also with an
// OpenZeppelin import), reads (tuples flattened), writes with and without wait, status, and the journal.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonRpcProvider, Contract, toUtf8String, Wallet, getAddress } from "ethers";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { OZ_TOKEN_SOURCE, TOKEN_ABI, TOKEN_SOURCE } from "../fixtures/contracts.js";

type Ok = {
  success: true;
  hash: string;
  transactionHash: string;
  queueId: string;
  output: unknown[];
  contractAddress: string;
  abi: { type: string; name?: string }[];
  id?: unknown;
  receipt?: { status: string; blockNumber: number; logs: { event: string | null; args: Record<string, unknown> | null }[] };
};

describe("ZKT REST on embedded anvil", () => {
  let gw: Gateway;
  let base: string;
  let provider: JsonRpcProvider;
  let token: string;
  const bob = Wallet.createRandom().address;

  beforeAll(async () => {
    gw = await startTestGateway();
    base = gw.network("testnet").url;
    provider = new JsonRpcProvider(gw.network("testnet").upstreamUrls[0], undefined, { staticNetwork: true, pollingInterval: 100 });
  });
  afterAll(async () => {
    provider?.destroy();
    await gw?.close();
  });
  const zkt = async (body: unknown) => {
    const res = await postJson(base + "/zkt/try-it-out", body);
    return { status: res.status, body: res.json as Ok & { success: boolean; error?: string; errorCode?: string } };
  };

  it("writes a message: on chain, data is the message, from is the shared signer", async () => {
    const res = await zkt({ arguments: "hello, chain ✓", id: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, id: 1 });
    expect(res.body.hash).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await provider.waitForTransaction(res.body.hash, 1, 10_000);
    expect(receipt?.status).toBe(1);
    const tx = await provider.getTransaction(res.body.hash);
    expect(tx!.from).toBe(gw.publicSignerAddress);
    expect(tx!.to).toBe("0x0000000000000000000000000000000000000000");
    expect(toUtf8String(tx!.data)).toBe("hello, chain ✓");
    // The status endpoint follows it to completion.
    let status: { status: string; transactionHash: string } | undefined;
    for (let i = 0; i < 40 && status?.status !== "completed"; i++) {
      status = (await (await fetch(`${base}/zkt/transactions/${res.body.queueId}`)).json()) as typeof status;
      if (status?.status !== "completed") await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toMatchObject({ status: "completed", transactionHash: res.body.hash });
  });

  it("deploys an ERC-20 from Solidity source with constructor arguments", async () => {
    const res = await zkt({ code: TOKEN_SOURCE, arguments: ["Demo Token", "DEMO", "1000000"], id: "deploy-1" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, id: "deploy-1" });
    token = res.body.contractAddress;
    expect(await provider.getCode(token)).not.toBe("0x");
    const fn = res.body.abi.find((e) => e.name === "transfer");
    expect(fn).toMatchObject({
      type: "function",
      stateMutability: "nonpayable",
      inputs: [
        { internalType: "address", name: "to", type: "address" },
        { internalType: "uint256", name: "value", type: "uint256" },
      ],
    });
    expect(res.body.abi.some((e) => e.type === "constructor")).toBe(true);
  });

  it("reads: name, balanceOf, a tuple flattened, multiple returns", async () => {
    const read = async (method: string, args: unknown[]) => (await zkt({ to: token, abi: TOKEN_ABI, method, arguments: args, id: 9 })).body;
    expect(await read("name", [])).toEqual({ success: true, output: ["Demo Token"], id: 9 });
    expect((await read("balanceOf", [gw.publicSignerAddress])).output).toEqual(["1000000"]);
    expect((await read("info", [])).output).toEqual(["Demo Token", "DEMO", "1000000"]);
    expect((await read("pair", [])).output).toEqual(["18", true]);
    // Overloads resolve by argument count; full signatures pick explicitly.
    expect((await read("add", ["41"])).output).toEqual(["42"]);
    expect((await read("add", [40, "0x2"])).output).toEqual(["42"]);
    expect((await read("over(int16)", ["-5"])).output).toEqual(["-5"]);
  });

  it("writes transfer without wait (hash at once) and with wait (receipt with decoded events); chain agrees", async () => {
    const quick = await zkt({ to: token, abi: TOKEN_ABI, method: "transfer", arguments: [bob, "250"], id: 3 });
    expect(quick.status).toBe(200);
    expect(quick.body).toMatchObject({ success: true, id: 3 });
    expect(quick.body.transactionHash).toBe(quick.body.hash);
    expect(quick.body.receipt).toBeUndefined();

    const waited = await zkt({ to: token, abi: TOKEN_ABI, method: "transfer", arguments: [bob, "750"], wait: true });
    expect(waited.status).toBe(200);
    expect(waited.body.receipt!.status).toBe("success");
    expect(waited.body.receipt!.logs).toEqual([
      expect.objectContaining({ event: "Transfer", args: { from: gw.publicSignerAddress, to: getAddress(bob), value: "750" } }),
    ]);
    await provider.waitForTransaction(quick.body.hash, 1, 10_000);
    const onChain = new Contract(token, TOKEN_ABI, provider);
    expect(await onChain.getFunction("balanceOf")(bob)).toBe(1000n);
    expect(await onChain.getFunction("balanceOf")(gw.publicSignerAddress)).toBe(999000n);
  });

  it("a revert is success:false with the decoded reason or custom error, and nothing is sent", async () => {
    const nonce = await provider.getTransactionCount(gw.publicSignerAddress, "pending");
    const custom = await zkt({ to: token, abi: TOKEN_ABI, method: "transfer", arguments: [bob, "10000000"], id: 4 });
    expect(custom.status).toBe(422);
    expect(custom.body).toMatchObject({
      success: false,
      errorCode: "TXN_NOT_PROCESSED",
      id: 4,
      error: "transfer reverted: InsufficientBalance(uint256,uint256)",
    });
    expect((custom.body as unknown as { details: unknown }).details).toMatchObject({
      error: "InsufficientBalance",
      args: { available: "999000", required: "10000000" },
    });
    const reason = await zkt({ to: token, abi: TOKEN_ABI, method: "mustBePositive", arguments: ["0"] });
    expect(reason.status).toBe(422);
    expect(reason.body.error).toBe("mustBePositive reverted: x must be positive");
    expect(await provider.getTransactionCount(gw.publicSignerAddress, "pending")).toBe(nonce);
  });

  it("deploys with an OpenZeppelin import", async () => {
    const res = await zkt({ code: OZ_TOKEN_SOURCE, arguments: ["5000"] });
    expect(res.status).toBe(200);
    const read = await zkt({
      to: res.body.contractAddress,
      abi: ["function symbol() view returns (string)", "function totalSupply() view returns (uint256)"],
      method: "symbol",
      arguments: [],
    });
    expect(read.body.output).toEqual(["OZT"]);
    const supply = await zkt({ to: res.body.contractAddress, abi: res.body.abi, method: "totalSupply", arguments: [] });
    expect(supply.body.output).toEqual(["5000"]);
  });

  it("the same source deploys again (a new contract) with different constructor arguments", async () => {
    const again = await zkt({ code: TOKEN_SOURCE, arguments: ["Again", "AGN", "1"] });
    expect(again.status).toBe(200);
    expect(again.body.contractAddress).not.toBe(token);
    expect((await zkt({ to: again.body.contractAddress, abi: TOKEN_ABI, method: "name", arguments: [] })).body.output).toEqual(["Again"]);
  });

  it("deploy with wait: false answers once journaled, with the address the contract is then mined at", async () => {
    const res = await zkt({ code: TOKEN_SOURCE, arguments: ["Later", "LTR", "7"], wait: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true });
    // Answered before its block (0.25 s blocks): the status is not yet "completed".
    const status = (await (await fetch(`${base}/zkt/transactions/${res.body.queueId}`)).json()) as { status: string };
    expect(status.status).not.toBe("completed");
    const receipt = await provider.waitForTransaction(res.body.hash, 1, 10_000);
    expect(receipt?.contractAddress).toBe(res.body.contractAddress);
    expect((await zkt({ to: res.body.contractAddress, abi: res.body.abi, method: "symbol", arguments: [] })).body.output).toEqual(["LTR"]);
  });

  it("unknown queueId is 404", async () => {
    const res = await fetch(`${base}/zkt/transactions/00000000-0000-0000-0000-000000000000`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ success: false, errorCode: "NOT_FOUND" });
  });
});
