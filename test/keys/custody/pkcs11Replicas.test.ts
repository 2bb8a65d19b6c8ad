// Two replicas on one PKCS#11 token (#66): each finds the wallets the other made there, and writes of one key
// sent through both (nginx between them, one PostgreSQL journal) never share a nonce: every acknowledged write
// is mined once, from the key's wallet. Skipped where nginx is not installed (.ci/run installs it).
import { afterAll, describe, expect, it } from "vitest";
import { expectMinedOnceAndCompleted, postJson, rpc } from "../../helpers/gateway.js";
import { NGINX } from "../../helpers/nginx.js";
import { type Replicas, startReplicas } from "../../helpers/replicas.js";
import { softToken } from "../../helpers/softhsm.js";

describe.skipIf(!NGINX)("two replicas on one PKCS#11 token", () => {
  let replicas: Replicas | undefined;
  afterAll(() => replicas?.stop());

  it("one key's writes through both replicas: each mined once, from the key's wallet; both share the try-it-out signer", { timeout: 180_000 }, async () => {
    const token = softToken("replicas");
    replicas = await startReplicas("hsm-replicas-", {
      SIGNER: "pkcs11",
      PKCS11_LIBRARY: token.library,
      PKCS11_TOKEN_LABEL: token.tokenLabel,
      PKCS11_PIN_FILE: token.pinFile,
      RATE_LIMIT: "1000000",
      RATE_LIMIT_PER_IP: "1000000",
      TRY_IT_OUT_RATE_LIMIT: "1000000",
    });
    const lb = replicas.lb.url;
    const direct = replicas.gateways.map((g) => g.url);
    // A key issued on one replica: the other finds its wallet in the token.
    const { apiKey, walletAddress } = (await postJson(`${direct[0]}/portal/keys`, { label: "shared" })).json as { apiKey: string; walletAddress: string };
    const acknowledged: { hash: string; queueId: string }[] = [];
    let n = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        while (n < 400) {
          const i = n++;
          // Alternating replicas directly as well as through nginx: both sign for the same lane.
          const base = i % 3 === 2 ? lb : direct[(i + w) % 2]!;
          const res = await postJson(`${base}/zkt/${apiKey}`, { arguments: `both ${i}` });
          expect(res.status, res.text).toBe(200);
          acknowledged.push(res.json as { hash: string; queueId: string });
        }
      }),
    );
    await expectMinedOnceAndCompleted(replicas.node, lb, acknowledged, 90_000);
    const senders = new Set<string>();
    for (const a of acknowledged.filter((_, i) => i % 20 === 0))
      senders.add((await rpc<{ from: string }>(replicas.node, "eth_getTransactionByHash", [a.hash])).from);
    expect([...senders].map((s) => s.toLowerCase())).toEqual([walletAddress.toLowerCase()]);
    // The public signer is the same pair on both.
    const publicFrom = await Promise.all(
      direct.map(async (base) => {
        const { hash } = (await postJson(`${base}/zkt/try-it-out`, { arguments: "public", wait: true })).json as { hash: string };
        return (await rpc<{ from: string }>(replicas!.node, "eth_getTransactionByHash", [hash])).from;
      }),
    );
    expect(publicFrom[0]).toBe(publicFrom[1]);
  });
});
