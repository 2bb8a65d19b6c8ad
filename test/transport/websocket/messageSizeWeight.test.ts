// A large WebSocket message counts by its size, as a large HTTP body does (#62's "refusals are cheap and
// counted" on every transport): one ~1 MB eth_call message counted as one request but cost the loop as much
// as the HTTP body that counts 15. Charged before the message is parsed; past the limit, refused unparsed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

const LIMIT = 100;
const message = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "eth_call",
  params: [{ to: "0x000000000000000000000000000000000000dEaD", data: `0x${"ab".repeat(480_000)}` }, "latest"],
});

describe("a large WebSocket message counts by its size", () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startTestGateway({ mutate: (c) => (c.rateLimit.requestsPerWindow = LIMIT) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("a ~1 MB eth_call message takes 15 of the caller's requests; past the limit the next are refused (-32005)", async () => {
    const ws = new WebSocket(gw.network("testnet").url.replace("http", "ws"), { localAddress: "127.0.0.15" });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const answers: { result?: string; error?: { code: number } }[] = [];
    for (let i = 0; i < 10; i++) {
      const answered = new Promise<string>((resolve) => ws.once("message", (d) => resolve(String(d))));
      ws.send(message);
      answers.push(JSON.parse(await answered) as { result?: string; error?: { code: number } });
    }
    ws.close();
    const weight = Math.ceil(Buffer.byteLength(message) / 65_536);
    expect(weight).toBe(15);
    // The socket's opening took one of the 100; six such calls fit in the 99 left, the rest are refused.
    const fit = Math.floor((LIMIT - 1) / weight);
    expect(
      answers.slice(0, fit).every((a) => a.result === "0x"),
      JSON.stringify(answers.map((a) => a.error ?? "ok")),
    ).toBe(true);
    expect(answers.slice(fit).map((a) => a.error?.code)).toEqual(Array(10 - fit).fill(-32005));
  });
});
