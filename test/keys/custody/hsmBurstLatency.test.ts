// Others during a burst of token-signed writes (#66): the gateway as its own process with SIGNER=pkcs11 on
// SoftHSM2, 1,000 ZKT writes from 8 keys sent at 200 a second from a process of their own (a hardware
// token's pace; SoftHSM2 on this machine peaks near 1,300), while another caller's eth_chainId p99 stays
// within 2x of its calm p99 in the same run. (At full speed, writers never waiting, no signer holds that: x4.5
// token-signed, x8 seed-signed here; pkcs11Wallets.test.ts compares the two.)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pacedWrites } from "../../helpers/attackers.js";
import { postJson } from "../../helpers/gateway.js";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { softToken } from "../../helpers/softhsm.js";
import { startProbeProcess } from "../../helpers/stallProbe.js";

const KEYS = 8;
const WRITES = 1_000;
const PER_SECOND = 200;

describe("a burst of token-signed writes, the gateway as a process", () => {
  let gw: GatewayProcess;
  const keys: string[] = [];
  beforeAll(async () => {
    const token = softToken("hsm-burst");
    gw = await startGatewayProcess(
      {
        DATA_DIR: mkdtempSync(join(tmpdir(), "gw-hsm-burst-")),
        LOG_LEVEL: "info",
        SIGNER: "pkcs11",
        PKCS11_LIBRARY: token.library,
        PKCS11_TOKEN_LABEL: token.tokenLabel,
        PKCS11_PIN_FILE: token.pinFile,
        RATE_LIMIT: "100000",
        RATE_LIMIT_PER_IP: "100000",
        PORTAL_KEYS_PER_HOUR: "100",
      },
      "bundle",
    );
    for (let i = 0; i < KEYS; i++) keys.push(((await postJson(`${gw.url}/portal/keys`, { label: `burst ${i}` })).json as { apiKey: string }).apiKey);
    // Each key's wallet used once: made in the token, and the gateway warm.
    await Promise.all(keys.map((k) => postJson(`${gw.url}/zkt/${k}`, { arguments: "warm" })));
  }, 120_000);
  afterAll(async () => {
    gw?.child.kill();
    await gw?.exited;
  });

  // Latency ratios on a machine the suite's other files share: a run that loses to them is run again (twice at most).
  it(`${WRITES} writes at ${PER_SECOND}/s: all accepted, others' eth_chainId p99 within 2x of calm`, { timeout: 120_000, retry: 2 }, async () => {
    // Others: a caller of its own process, every 5 ms.
    const chainId = () => startProbeProcess(gw.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', 5);
    // Calm for as long as the burst lasts: two p99s of as many calls.
    const calmProbe = await chainId();
    await new Promise((r) => setTimeout(r, (WRITES / PER_SECOND) * 1000));
    const calm = await calmProbe.stop();
    const busyProbe = await chainId();
    const { statuses, ms } = await pacedWrites(gw.url, WRITES, PER_SECOND, keys);
    const busy = await busyProbe.stop();
    const report = `${WRITES} writes in ${ms} ms (${JSON.stringify(statuses)}); eth_chainId calm p50 ${calm.p50.toFixed(2)} p99 ${calm.p99.toFixed(2)} ms (${calm.latencies.length} calls), during p50 ${busy.p50.toFixed(2)} p99 ${busy.p99.toFixed(2)} ms (${busy.latencies.length})`;
    console.log(report);
    expect(statuses, report).toEqual({ "200": WRITES });
    expect(busy.p99, report).toBeLessThanOrEqual(2 * calm.p99);
  });
});
