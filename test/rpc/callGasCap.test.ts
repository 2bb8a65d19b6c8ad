// One eth_call must not stop the chain (#62): a looping contract called with gas 0xffffffffffff ran anvil
// until it was killed, and the chain stopped mining. The gateway caps the call's gas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, fetch as undiciFetch } from "undici";
import type { Gateway } from "../../src/gateway.js";
import { capCallGas } from "../../src/rpc/callGasCap.js";
import { rpc, startTestGateway } from "../helpers/gateway.js";

/** JUMPDEST PUSH1 0 JUMP: runs until its gas is spent. */
const LOOP_CODE = "0x5b600056";
const LOOP = "0x00000000000000000000000000000000000100ff";

function from(localAddress: string): Agent {
  return new Agent({ localAddress, connections: 64 });
}

async function post(
  agent: Agent,
  url: string,
  body: unknown,
): Promise<{ status: number; json: { result?: unknown; error?: { code: number; message: string } } }> {
  const res = await undiciFetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), dispatcher: agent });
  return { status: res.status, json: (await res.json()) as { result?: unknown; error?: { code: number; message: string } } };
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
}

describe("call gas cap", () => {
  let gw: Gateway;
  let url: string;
  const attacker = from("127.0.0.1");
  const other = from("127.0.0.2");
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => void (c.nodeQueuePerCaller = 20) });
    url = gw.network("testnet").url;
    await rpc(gw.network("testnet").upstreamUrls[0]!, "anvil_setCode", [LOOP, LOOP_CODE]);
  });
  afterAll(async () => {
    await gw?.close();
    await attacker.close();
    await other.close();
  });

  it("lowers a call's gas to the cap, and leaves a smaller one alone", () => {
    const capped = capCallGas("eth_call", [{ to: LOOP, gas: "0xffffffffffff" }, "latest"], 30_000_000n);
    expect(capped).toEqual([{ to: LOOP, gas: "0x1c9c380" }, "latest"]);
    const small = [{ to: LOOP, gas: "0x5208" }, "latest"];
    expect(capCallGas("eth_estimateGas", small, 30_000_000n)).toBe(small);
    const sim = capCallGas(
      "eth_simulateV1",
      [{ blockStateCalls: [{ calls: [{ to: LOOP, gas: "0xffffffffffff" }, { to: LOOP }, { to: LOOP }] }] }, "latest"],
      30_000_000n,
    );
    const gases = (sim[0] as { blockStateCalls: { calls: { gas: string }[] }[] }).blockStateCalls[0]!.calls.map((c) => BigInt(c.gas));
    expect(gases.reduce((a, b) => a + b, 0n)).toBeLessThanOrEqual(30_000_000n);
  });

  for (const method of ["eth_call", "eth_estimateGas"]) {
    // Latency ratios on a machine the suite's other files share: a run that loses to them is run again (twice at most).
    it(`${method} of a looping contract with gas 0xffffffffffff, ten in parallel: answered within 5 s, the chain keeps mining, others served`, {
      retry: 2,
    }, async () => {
      // Calm baseline of another address's uncached reads (after a warm-up).
      const calm: number[] = [];
      for (let i = -20; i < 100; i++) {
        const t = performance.now();
        await post(other, url, { jsonrpc: "2.0", id: i, method: "eth_getBalance", params: [`0x${(i + 1000).toString(16).padStart(40, "0")}`, "latest"] });
        if (i >= 0) calm.push(performance.now() - t);
      }
      const head0 = BigInt(await rpc<string>(url, "eth_blockNumber"));
      const started = performance.now();
      const attack = Array.from({ length: 10 }, (_, i) =>
        post(attacker, url, { jsonrpc: "2.0", id: i, method, params: [{ to: LOOP, gas: "0xffffffffffff" }, "latest"] }).then((r) => ({
          ...r,
          ms: performance.now() - started,
        })),
      );
      const during: number[] = [];
      let attacking = true;
      void Promise.all(attack).finally(() => (attacking = false));
      const others = (async () => {
        for (let i = 0; attacking || i < 100; i++) {
          const t = performance.now();
          const r = await post(other, url, {
            jsonrpc: "2.0",
            id: i,
            method: "eth_getBalance",
            params: [`0x${(i + 100).toString(16).padStart(40, "0")}`, "latest"],
          });
          expect(r.json.result).toBeDefined();
          during.push(performance.now() - t);
        }
      })();
      const answers = await Promise.all(attack);
      await others;
      for (const a of answers) {
        expect(a.ms).toBeLessThan(5_000);
        // Out of gas at the cap: an error, not a result the loop never reached.
        expect(a.json.error).toBeDefined();
      }
      // The chain keeps mining: at least two blocks in the next second.
      await new Promise((r) => setTimeout(r, 1_000));
      const head1 = BigInt(await rpc<string>(url, "eth_blockNumber"));
      expect(head1 - head0).toBeGreaterThanOrEqual(2n);
      expect(p99(during)).toBeLessThan(5 * p99(calm));
    });
  }

  it("holds one address to its share of the node: past its line its heavy calls are refused (counted), others served", async () => {
    const share = 1;
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(attacker, url, { jsonrpc: "2.0", id: i, method: "eth_call", params: [{ to: LOOP, gas: "0x1c9c380" }, "latest"] }),
      ),
    );
    const refused = burst.filter((b) => b.json.error?.code === -32005);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThanOrEqual(60 - share);
    expect(refused[0]!.status).toBe(429);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/gateway_node_share_refusals_total\{network="testnet"\} [1-9]/);
    const mine = await post(other, url, { jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to: LOOP, gas: "0x5208" }, "latest"] });
    expect(mine.json.error?.code).not.toBe(-32005);
  });
});
