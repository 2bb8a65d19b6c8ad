// Moving a key's wallet (#66): an operator gives a key a new wallet through the admin API; the key's next write
// is signed by the new address, the old address stays in the key's history, the old writes' statuses still
// answer, and a write journaled by the old wallet is still the gateway's to finish (found by its address).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { adminClient } from "../helpers/adminClient.js";
import { postJson, rpc, startTestGateway } from "../helpers/gateway.js";
import { until } from "../helpers/until.js";

const ADMIN = "move-wallet-admin-token-0123456789abcdef";

describe("moving a key's wallet", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.adminTokens = [`ops:${ADMIN}`]) });
    base = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("the next write is signed by the new wallet; the old one is the key's history and its writes still answer", async () => {
    const admin = adminClient(base, ADMIN);
    const { apiKey, key } = await admin.createKey({ label: "moves" });
    const other = await admin.createKey({ label: "bystander" });
    const write = async (text: string) => (await postJson(`${base}/zkt/${apiKey}`, { arguments: text, wait: true })).json as { hash: string; queueId: string };
    const sender = async (hash: string) => (await rpc<{ from: string }>(base, "eth_getTransactionByHash", [hash])).from.toLowerCase();

    const before = await write("from the first wallet");
    expect(await sender(before.hash)).toBe(key!.wallet.toLowerCase());

    const moved = (await admin.moveKeyWallet({ id: key!.id })).key!;
    expect(moved.wallet).not.toBe(key!.wallet);
    expect(moved.previousWallets).toEqual([key!.wallet]);
    // A new wallet, never another key's.
    expect([other.key!.wallet, key!.wallet]).not.toContain(moved.wallet);

    const after = await write("from the new wallet");
    expect(await sender(after.hash)).toBe(moved.wallet.toLowerCase());
    // The old write's status still answers.
    const status = async () => (await (await fetch(`${base}/zkt/transactions/${before.queueId}`)).json()) as { status: string; transactionHash: string };
    await until(async () => (await status()).status === "completed", 5_000);
    expect(await status()).toMatchObject({ status: "completed", transactionHash: before.hash });
    // The gateway still holds the old wallet: a journaled write of it can be finished or resent.
    expect((await gw.keys.walletByAddress(key!.wallet))?.address).toBe(key!.wallet);
    // Listed with its history; a key created after the move gets an index of its own.
    const listed = (await admin.listKeys({})).keys.find((k) => k.id === key!.id)!;
    expect(listed.previousWallets).toEqual([key!.wallet]);
    const later = await admin.createKey({ label: "later" });
    expect([key!.wallet, moved.wallet, other.key!.wallet]).not.toContain(later.key!.wallet);
    await expect(admin.moveKeyWallet({ id: "no-such-key" })).rejects.toThrow(/no API key/);
  });
});
