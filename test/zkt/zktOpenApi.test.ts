// GET /zkt/openapi.json describes what the server really accepts and returns: real requests and their real
// responses (successes and errors) are validated against the served document.
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS with a default export; under NodeNext the function sits on .default.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);
import type { Gateway } from "../../src/gateway.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";
import { TOKEN_ABI, TOKEN_SOURCE } from "../fixtures/contracts.js";

interface Doc {
  openapi: string;
  paths: Record<
    string,
    Record<string, { requestBody?: { $ref: string }; responses: Record<string, { content?: { "application/json": { schema: unknown } } }> }>
  >;
}

describe("ZKT OpenAPI document", () => {
  let gw: Gateway;
  let base: string;
  let doc: Doc;
  let ajv: Ajv;
  beforeAll(async () => {
    gw = await startTestGateway();
    base = gw.network("testnet").url;
    const res = await fetch(base + "/zkt/openapi.json");
    expect(res.status).toBe(200);
    doc = (await res.json()) as Doc;
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, "openapi");
  });
  afterAll(() => gw?.close());

  const check = (schema: unknown, value: unknown): void => {
    const validate = ajv.compile(schema as object);
    const ok = validate(value);
    expect(ok, JSON.stringify(validate.errors) + " for " + JSON.stringify(value)).toBe(true);
  };
  const ref = (pointer: string) => ({ $ref: "openapi" + pointer });

  it("is OpenAPI 3.0.3", () => {
    expect(doc.openapi).toBe("3.0.3");
  });

  it("real requests and responses match it", async () => {
    const post = doc.paths["/zkt/try-it-out"]!.post!;
    const requestSchema = ref("#/components/requestBodies/ZktRequest/content/application~1json/schema");
    const exchange = async (body: unknown) => {
      const res = await postJson(base + "/zkt/try-it-out", body);
      const responseSchema = post.responses[String(res.status)]?.content?.["application/json"].schema;
      expect(responseSchema, `status ${res.status} is documented`).toBeDefined();
      check(resolveRefs(responseSchema), res.json);
      return res.json as Record<string, unknown>;
    };
    const valid = [
      { arguments: "documented", id: 1 },
      { code: TOKEN_SOURCE, arguments: ["Doc", "DOC", "10"], id: "d" },
    ];
    for (const body of valid) check(requestSchema, body);
    await exchange(valid[0]);
    const deployed = await exchange(valid[1]);
    const to = deployed.contractAddress as string;
    const calls = [
      { to, abi: TOKEN_ABI, method: "info", arguments: [] },
      { to, abi: TOKEN_ABI, method: "transfer", arguments: ["0x000000000000000000000000000000000000dEaD", "1"], wait: true, id: 5 },
      { to, abi: TOKEN_ABI, method: "transfer", arguments: ["0x000000000000000000000000000000000000dEaD", "1"] },
    ];
    for (const body of calls) {
      check(requestSchema, body);
      const out = await exchange(body);
      expect(out.success).toBe(true);
    }
    // Error responses are documented too.
    for (const body of [
      { nope: 1 },
      { to, abi: TOKEN_ABI, method: "transfer", arguments: ["0x000000000000000000000000000000000000dEaD", "1000"] },
      { code: "contract {" },
    ]) {
      const out = await exchange(body);
      expect(out.success).toBe(false);
    }
    // A compressed body: 415, documented (#68).
    const gzipped = await fetch(base + "/zkt/try-it-out", {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: new Uint8Array(gzipSync(JSON.stringify(valid[0]))),
    });
    expect(gzipped.status).toBe(415);
    const gzipSchema = post.responses["415"]?.content?.["application/json"].schema;
    expect(gzipSchema, "status 415 is documented").toBeDefined();
    check(resolveRefs(gzipSchema), await gzipped.json());
    const status = await fetch(`${base}/zkt/transactions/${deployed.queueId as string}`);
    check(resolveRefs(doc.paths["/zkt/transactions/{queueId}"]!.get!.responses["200"]!.content!["application/json"].schema), await status.json());
  });
});

// Point every $ref of a response schema at the registered document.
function resolveRefs(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#/g, '"$ref":"openapi#'));
}
