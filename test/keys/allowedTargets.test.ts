// A key limited to some receivers (#54): its ZKT writes and keyed eth_sendRawTransaction to other addresses
// get 403 FORBIDDEN_TARGET / -32003, deploys too (a deploy has no receiver), before anything is signed or
// journaled; its writes to a listed address go through.
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { TOKEN_ABI, TOKEN_SOURCE } from "../fixtures/contracts.js";
import { postJson, startTestGateway, journalOf } from "../helpers/gateway.js";

describe("a key's allowed write targets", () => {
  let gw: Gateway;
  let url: string;
  let token: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
    const deployed = await postJson(`${url}/zkt/try-it-out`, { code: TOKEN_SOURCE, arguments: ["T", "T", "100"], wait: true });
    token = (deployed.json as { contractAddress: string }).contractAddress;
  }, 60_000);
  afterAll(() => gw?.close());

  it("writes to a listed address only; other writes, messages and deploys are 403 FORBIDDEN_TARGET with nothing journaled", async () => {
    const { apiKey, info } = await gw.keys.create({ allowedTargets: [token.toUpperCase().replace("0X", "0x")] });
    expect(info.allowedTargets).toEqual([token.toLowerCase()]);
    const since = new Date(Date.now() - 1_000);
    const write = (to: string) => postJson(`${url}/zkt/${apiKey}`, { to, abi: TOKEN_ABI, method: "transfer", arguments: [token, "0"] });
    expect((await write(token)).status).toBe(200);

    const elsewhere = await write("0x000000000000000000000000000000000000bEEF");
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json).toMatchObject({
      success: false,
      errorCode: "FORBIDDEN_TARGET",
      error: expect.stringMatching(/may not write to 0x000000000000000000000000000000000000bEEF/),
    });
    const message = await postJson(`${url}/zkt/${apiKey}`, { arguments: "hello" });
    expect(message.json).toMatchObject({ errorCode: "FORBIDDEN_TARGET" });
    const deploy = await postJson(`${url}/zkt/${apiKey}`, { code: "pragma solidity ^0.8.0; contract X {}" });
    expect(deploy.json).toMatchObject({ errorCode: "FORBIDDEN_TARGET", error: expect.stringMatching(/creates a contract/) });
    // Only the allowed write was journaled for the key's wallet.
    expect(await journalOf(gw).countBySignerSince(info.walletAddress, since)).toBe(1);

    // A caller-signed transaction to another address: -32003, not sent.
    const signer = Wallet.createRandom();
    const raw = await signer.signTransaction({
      to: "0x000000000000000000000000000000000000bEEF",
      value: 0n,
      gasLimit: 21_000n,
      gasPrice: 0n,
      nonce: 0,
      chainId: 20180427n,
    });
    const sent = await postJson(`${url}/zgt/${apiKey}`, { jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: [raw] });
    expect(sent.json).toMatchObject({ error: { code: -32003, message: expect.stringMatching(/may not write to/) } });

    // A key without a list is not limited.
    const free = await gw.keys.create();
    expect((await postJson(`${url}/zkt/${free.apiKey}`, { arguments: "hello" })).status).toBe(200);
  });
});
