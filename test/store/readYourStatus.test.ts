// A write's status reads what this gateway already knows: a ZKT write answered with `wait: true` (mined, its
// receipt in the answer) read "pending" from the same gateway right after, 20 times of 20 — its "processing"
// mark waits 750 ms in the status batcher (statusBatcher.ts) before it is written. A status read now sees the
// statuses queued for the write: "processing" (mined, not yet `confirmations` deep) or "completed".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("a status read right after the write's answer", () => {
  let gw: Gateway;
  let base: string;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.tryItOutRequestsPerWindow = 10_000) });
    base = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("wait: true, then GET /zkt/transactions/<queueId> at once: never pending, 20 times of 20", { timeout: 120_000 }, async () => {
    const seen: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const { queueId } = (await postJson(`${base}/zkt/try-it-out`, { arguments: `read your status ${i}`, wait: true })).json as { queueId: string };
        seen.push(((await (await fetch(`${base}/zkt/transactions/${queueId}`)).json()) as { status: string }).status);
      }),
    );
    expect(
      seen.filter((s) => s !== "processing" && s !== "completed"),
      seen.join(" "),
    ).toEqual([]);
  });
});
