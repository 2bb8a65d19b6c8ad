// Which transaction spent a nonce, on a node without past states (pruned, or anvil restarted on a dump): the
// blocks are read whole, newest first. A reader playing such a node, as the unit under test sees it.
import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/errors.js";
import { NonceSpenders } from "../../src/sequencer/nonceSpender.js";

const signer = "0x00000000000000000000000000000000000000aa";
const tx = (nonce: number, hash: string) => ({ hash, from: signer, nonce: `0x${nonce.toString(16)}`, to: signer, input: "0x", value: "0x0" });

/** Blocks 0-2; block 2 spent nonces 5, 6 and 7 of the signer, in one block. No past state is given. */
function nodeWithoutPastStates(timeouts: number[] = []) {
  const blocks = [
    { hash: "0xb0", transactions: [] },
    { hash: "0xb1", transactions: [tx(3, "0x03"), tx(4, "0x04")] },
    { hash: "0xb2", transactions: [tx(5, "0x05"), tx(6, "0x06"), tx(7, "0x07")] },
  ];
  const node = {
    wholeReads: 0,
    call: async (method: string, params: JsonValue[]): Promise<JsonValue> => {
      if (method === "eth_blockNumber") return "0x2";
      if (method === "eth_getTransactionCount") throw new Error("missing trie node");
      // A whole block through the client's deadline (counted as no deadline of its own).
      if (method === "eth_getBlockByNumber" && params[1] === true) return node.callPatient(method, params, 0);
      if (method === "eth_getBlockByNumber") return { hash: blocks[Number(params[0])]!.hash };
      throw new Error(`unexpected ${method}`);
    },
    callPatient: async (method: string, params: JsonValue[], timeoutMs: number): Promise<JsonValue> => {
      if (method !== "eth_getBlockByNumber" || params[1] !== true) throw new Error(`unexpected ${method}`);
      node.wholeReads++;
      timeouts.push(timeoutMs);
      return blocks[Number(params[0])] ?? null;
    },
  };
  return node;
}

describe("the nonce spender on a node without past states", () => {
  it("finds a write mined in the middle of its signer's run in one block (it said 'absent' at the first lower nonce, and the write was signed twice)", async () => {
    const node = nodeWithoutPastStates();
    const spenders = new NonceSpenders(node);
    expect(await spenders.of({ signer, nonce: 6, hash: "0x06", raw: "0x" }, false)).toEqual({ verdict: "mined", hash: "0x06", block: 2, blockHash: "0xb2" });
    expect(await spenders.of({ signer, nonce: 7, hash: "0x07", raw: "0x" }, false)).toMatchObject({ verdict: "mined", block: 2 });
    // Another transaction at the nonce: absent, so the write may be signed again.
    expect(await spenders.of({ signer, nonce: 4, hash: "0xother", raw: "0x" }, false)).toMatchObject({ verdict: "absent" });
  });

  it("reads whole blocks with their own deadline, and a new pass does not read again the blocks it kept", async () => {
    const timeouts: number[] = [];
    const node = nodeWithoutPastStates(timeouts);
    const spenders = new NonceSpenders(node);
    await spenders.of({ signer, nonce: 3, hash: "0x03", raw: "0x" }, false);
    const read = node.wholeReads;
    expect(read).toBeGreaterThan(0);
    expect(Math.min(...timeouts)).toBeGreaterThanOrEqual(10_000);
    spenders.newPass();
    expect(await spenders.of({ signer, nonce: 4, hash: "0x04", raw: "0x" }, false)).toMatchObject({ verdict: "mined", block: 1 });
    expect(node.wholeReads).toBe(read);
  });
});
