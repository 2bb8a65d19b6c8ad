// The README's runnable examples run here, against a real gateway, so they never rot.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

const run = promisify(execFile);

describe("docs/examples", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw?.close());

  it("sponsoredTransaction.ts sponsors an unfunded sender", async () => {
    const { apiKey, info } = await gw.keys.create({ label: "docs" });
    const { stdout } = await run(process.execPath, ["--import", "tsx", "docs/examples/sponsoredTransaction.ts"], { env: { ...process.env, GATEWAY_URL: gw.network("testnet").url, API_KEY: apiKey } });
    expect(JSON.parse(stdout)).toMatchObject({ status: 1, sponsor: info.walletAddress });
  });
});
