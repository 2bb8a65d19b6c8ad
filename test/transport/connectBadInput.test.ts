// A body that is not valid protobuf is a malformed request on every Connect wire: invalid_argument (400 on
// Connect), as a malformed JSON body already was, never internal (500). Sent raw, as a broken client would.
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../src/gateway.js";
import { startTestGateway } from "../helpers/gateway.js";

const PATH = "/chaingateway.rpc.v1.RpcService/GetBalance";
/** Field 1 (address), length-delimited, 16 bytes announced and none sent. */
const TRUNCATED = new Uint8Array([0x0a, 0x10]);
const enveloped = (msg: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array([0, 0, 0, 0, msg.length, ...msg]);

describe("Connect wires: a malformed protobuf body", () => {
  let gw: Gateway;
  let url: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
  });
  afterAll(() => gw?.close());

  it("Connect binary: 400 invalid_argument saying what failed; Connect JSON says the same for bad JSON", async () => {
    const res = await fetch(url + PATH, { method: "POST", headers: { "content-type": "application/proto" }, body: TRUNCATED });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toMatch(/^parse binary: /);

    const json = await fetch(url + PATH, { method: "POST", headers: { "content-type": "application/json" }, body: '{"address": ' });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { code: string }).code).toBe("invalid_argument");
  });

  it("gRPC-Web: grpc-status 3", async () => {
    const res = await fetch(url + PATH, { method: "POST", headers: { "content-type": "application/grpc-web+proto" }, body: enveloped(TRUNCATED) });
    expect(res.status).toBe(200);
    // Trailers-only answers carry the status in the headers; others in a trailer frame at the end of the body.
    const status = res.headers.get("grpc-status") ?? /grpc-status:\s*(\d+)/.exec(Buffer.from(await res.arrayBuffer()).toString("latin1"))?.[1];
    expect(status).toBe("3");
  });

  it("gRPC over h2c: grpc-status 3", async () => {
    const session = http2.connect(url);
    try {
      const status = await new Promise<string | undefined>((resolve, reject) => {
        const req = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc+proto", te: "trailers" });
        let fromHeaders: string | undefined;
        req.on("response", (headers) => {
          fromHeaders = headers["grpc-status"] as string | undefined;
        });
        req.on("trailers", (trailers) => resolve(trailers["grpc-status"] as string | undefined));
        req.on("end", () => resolve(fromHeaders));
        req.on("error", reject);
        req.resume();
        req.end(enveloped(TRUNCATED));
      });
      expect(status).toBe("3");
    } finally {
      session.close();
    }
  });
});
