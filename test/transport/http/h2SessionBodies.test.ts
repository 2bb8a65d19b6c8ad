// One HTTP/2 session cannot hold more than a few MB of bodies (#51). Its streams' bodies are read as they
// arrive, so flow-control windows never bounded them: 100 streams of a session each sending most of a 1 MB
// body were held whole, and only the IP's 32 MB share stopped them. A session now has an 8 MB share: past
// it, a stream of a declared length is answered 503 before its body is read, and one of no declared length
// (gRPC) is reset; other sessions, and the IP's other clients, are served.
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway.js";
import { startTestGateway } from "../../helpers/gateway.js";

const MB = 1024 * 1024;

/** A POST on `session` that sends `sent` bytes of its body and never ends it; settles with its status, or "reset". */
function holdBody(session: http2.ClientHttp2Session, declared: number | undefined, sent: number): Promise<number | "reset" | "open"> {
  return new Promise((resolve) => {
    const headers: http2.OutgoingHttpHeaders = { ":method": "POST", ":path": "/", "content-type": "application/json" };
    if (declared !== undefined) headers["content-length"] = String(declared);
    const stream = session.request(headers);
    stream.on("response", (h) => resolve(Number(h[":status"])));
    stream.on("error", () => resolve("reset"));
    stream.on("close", () => resolve(stream.rstCode ? "reset" : "open"));
    stream.write(Buffer.alloc(sent, 0x20));
    // Still open after this long: its body is being held.
    setTimeout(() => resolve("open"), 1_500);
  });
}

describe("an HTTP/2 session's bodies", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("of a declared length: 8 MB are held, streams past that get 503 before their bodies; another session is served", { timeout: 30_000 }, async () => {
    const greedy = http2.connect(url);
    const other = http2.connect(url);
    try {
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => holdBody(greedy, MB, 200 * 1024)));
      expect(outcomes.filter((o) => o === "open")).toHaveLength(8);
      expect(outcomes.filter((o) => o === 503)).toHaveLength(12);
      // The same IP's other session has a share of its own.
      const answer = await new Promise<number>((resolve, reject) => {
        const s = other.request({ ":method": "POST", ":path": "/", "content-type": "application/json" });
        s.on("response", (h) => resolve(Number(h[":status"])));
        s.on("error", reject);
        s.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }));
      });
      expect(answer).toBe(200);
    } finally {
      greedy.destroy();
      other.destroy();
    }
  });

  it("across sessions: one IP's bodies stop at its 32 MB share", { timeout: 30_000 }, async () => {
    const sessions = Array.from({ length: 5 }, () => http2.connect(url));
    try {
      // 5 sessions of 8 streams of 1 MB: 40 MB, each session within its own share, the IP past its 32.
      const outcomes = (await Promise.all(sessions.map((s) => Promise.all(Array.from({ length: 8 }, () => holdBody(s, MB, 200 * 1024)))))).flat();
      expect(outcomes.filter((o) => o === "open")).toHaveLength(32);
      expect(outcomes.filter((o) => o === 503)).toHaveLength(8);
    } finally {
      for (const s of sessions) s.destroy();
    }
  });

  it("of no declared length: a stream that takes the session past its share is reset", { timeout: 30_000 }, async () => {
    const greedy = http2.connect(url);
    try {
      // 12 streams of 900 KB each: 10.8 MB, past the 8 MB share; about 8 are held.
      const outcomes = await Promise.all(Array.from({ length: 12 }, () => holdBody(greedy, undefined, 900 * 1024)));
      const held = outcomes.filter((o) => o === "open").length;
      expect(held).toBeGreaterThanOrEqual(7);
      expect(held).toBeLessThanOrEqual(9);
      expect(outcomes.filter((o) => o === "reset").length).toBe(12 - held);
    } finally {
      greedy.destroy();
    }
  });
});
