// The core's way from a request's calls to their outcomes, against a pool whose answers the test releases:
// a request's proxied calls settle together, in request order, beside calls answered otherwise; a coalesced
// read's joiners are answered when the node answers it, not when the rest of its first request is.
import { describe, expect, it } from "vitest";
import type { UpstreamPool } from "../../src/chain/upstreamPool.js";
import type { RpcCall, RpcOutcome } from "../../src/chain/upstreamReplies.js";
import { GatewayError, type JsonValue } from "../../src/errors.js";
import type { Access } from "../../src/keys/access.js";
import { InflightReads } from "../../src/rpc/inflightReads.js";
import { RpcCore } from "../../src/rpc/rpcCore.js";

const A = "0x00000000000000000000000000000000000000aa";
const B = "0x00000000000000000000000000000000000000bb";
const ctx = { access: { kind: "public" } as Access };

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A pool that holds each callMany until the test answers it. */
function heldPool() {
  const sent: { calls: RpcCall[]; answer: ReturnType<typeof deferred<RpcOutcome[]>> }[] = [];
  const pool = {
    callMany(calls: RpcCall[]): Promise<RpcOutcome[]> {
      const answer = deferred<RpcOutcome[]>();
      sent.push({ calls, answer });
      return answer.promise;
    },
  } as unknown as UpstreamPool;
  return { pool, sent };
}

const balance = (address: string) => ({ method: "eth_getBalance", params: [address, "latest"] as JsonValue[] });

describe("RpcCore: outcomes of a request's calls", () => {
  it("a batch's proxied calls go as one upstream call and come back in request order beside a local answer", async () => {
    const { pool, sent } = heldPool();
    const core = new RpcCore(pool, 20180427);
    const outcomes = core.callMany(ctx, [balance(A), { method: "eth_chainId", params: [] }, balance(B)]);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.calls.map((c) => c.params[0])).toEqual([A, B]);
    sent[0]!.answer.resolve([
      { ok: true, result: "0xa" },
      { ok: true, result: "0xb" },
    ]);
    const settled = await outcomes;
    expect(settled.map((o) => (o.ok ? o.result : o.error.message))).toEqual(["0xa", "0x133edcb", "0xb"]);
  });

  it("a failed upstream call fails each proxied call of the request with its error; local answers stand", async () => {
    const { pool, sent } = heldPool();
    const core = new RpcCore(pool, 20180427);
    const outcomes = core.callMany(ctx, [balance(A), { method: "eth_chainId", params: [] }, balance(B)]);
    sent[0]!.answer.reject(new GatewayError("upstream_unavailable", "no node"));
    const settled = await outcomes;
    expect(settled.map((o) => (o.ok ? o.result : o.error.message))).toEqual(["no node", "0x133edcb", "no node"]);
  });

  it("a read joined to another request's call is answered when the node answers that call, not when that request's slower calls are", async () => {
    const { pool, sent } = heldPool();
    const core = new RpcCore(pool, 20180427, undefined, undefined, undefined, new InflightReads());
    const slow = deferred<JsonValue>();
    core.register("platform_slow", () => slow.promise);
    // The first request waits on a slow custom method and on the node's answer for A.
    const first = core.callMany(ctx, [{ method: "platform_slow", params: [] }, balance(A)]);
    let firstDone = false;
    void Promise.resolve(first).then(() => (firstDone = true));
    // The second asks the same read while it is in flight: it joins (nothing more is sent).
    const joined = core.callMany(ctx, [balance(A)]);
    expect(sent).toHaveLength(1);
    sent[0]!.answer.resolve([{ ok: true, result: "0xa" }]);
    const [answer] = await joined;
    expect(answer).toMatchObject({ ok: true, result: "0xa" });
    expect(firstDone).toBe(false);
    slow.resolve("done");
    const settled = await first;
    expect(settled.map((o) => (o.ok ? o.result : o.error.message))).toEqual(["done", "0xa"]);
  });

  it("a method answered locally or registered after calls to it is answered so from the next call on", async () => {
    const { pool, sent } = heldPool();
    const core = new RpcCore(pool, 20180427);
    const gasPrice = { method: "eth_gasPrice", params: [] };
    const first = core.callMany(ctx, [gasPrice]);
    expect(sent).toHaveLength(1);
    sent[0]!.answer.resolve([{ ok: true, result: "0x5" }]);
    expect((await first)[0]).toMatchObject({ ok: true, result: "0x5" });
    core.answerLocally("eth_gasPrice", "0x0");
    expect(core.callMany(ctx, [gasPrice])).toEqual([{ ok: true, result: "0x0", raw: '"0x0"' }]);
    expect(sent).toHaveLength(1);
    // Unknown to the node's methods until registered: refused, then the registered answer.
    const custom = { method: "platform_example", params: [] };
    expect((core.callMany(ctx, [custom]) as { ok: boolean }[])[0]!.ok).toBe(false);
    core.register("platform_example", async () => "registered");
    expect((await core.callMany(ctx, [custom]))[0]).toMatchObject({ ok: true, result: "registered" });
  });
});
