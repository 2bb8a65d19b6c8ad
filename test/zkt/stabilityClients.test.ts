// Requests shaped as Stability's own clients send them (#34; their shapes written here, not their code):
// stability_* method names on every transport, keyless reads on /zgt/, a keyed path with a trailing slash,
// a V1 message with wait, and fields a client may add that no operation knows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Gateway } from "../../src/gateway.js";
import { RpcService } from "../../gen/chaingateway/rpc/v1/rpc_pb.js";
import { postJson, startTestGateway } from "../helpers/gateway.js";

describe("Stability's clients, by their request shapes", () => {
  let gw: Gateway;
  let url: string;
  let apiKey: string;
  beforeAll(async () => {
    gw = await startTestGateway();
    url = gw.network("testnet").url;
    apiKey = ((await postJson(url + "/portal/keys", { label: "stability" })).json as { apiKey: string }).apiKey;
  });
  afterAll(async () => {
    await gw?.close();
  });

  const rpc = (method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id: 1, method, params });

  it("the stability_* methods answer as the platform_* ones on /, /zgt/<key> and Connect's Call", async () => {
    const client = createClient(RpcService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    for (const m of ["getValidatorList", "getActiveValidatorList", "getSupportedTokens"]) {
      const platform = (await postJson(url + "/", rpc(`platform_${m}`))).json as { result: unknown };
      expect(platform.result).toMatchObject({ code: 200, value: expect.any(Array) });
      for (const path of ["/", `/zgt/${apiKey}`]) {
        const stability = (await postJson(url + path, rpc(`stability_${m}`))).json as { result: unknown };
        expect(stability.result, `${path} stability_${m}`).toEqual(platform.result);
      }
      const viaConnect = await client.call({ method: `stability_${m}` });
      expect(toJson(ValueSchema, viaConnect.result!)).toEqual(platform.result);
    }
    // The sponsored write: public callers are refused as for platform_, keyed ones reach it (and its checks).
    const pub = (await postJson(url + "/", rpc("stability_sendSponsoredTransaction", ["0x00", "0x00", "0x00"]))).json as {
      error: { code: number; message: string };
    };
    expect(pub.error.message).toMatch(/needs an API key/);
    const keyed = (await postJson(url + `/zgt/${apiKey}`, rpc("stability_sendSponsoredTransaction", [1]))).json as { error: { message: string } };
    expect(keyed.error.message).toMatch(/stability_sendSponsoredTransaction takes \[rawSignedTx, sponsorAddress, sponsorSignature\]/);
  });

  it("/zgt and /zgt/ are the public read-only endpoint; /zgt/<key>/ is the keyed one", async () => {
    for (const path of ["/zgt", "/zgt/"]) {
      const res = await postJson(url + path, rpc("eth_chainId"));
      expect(res.status, path).toBe(200);
      expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x133edcb" });
      const write = (await postJson(url + path, rpc("eth_sendRawTransaction", ["0x00"]))).json as { error: { message: string } };
      expect(write.error.message, path).toMatch(/needs an API key/);
    }
    const keyed = (await postJson(url + `/zgt/${apiKey}/`, rpc("eth_sendRawTransaction", ["0x00"]))).json as { error: { message: string } };
    expect(keyed.error.message).not.toMatch(/needs an API key/);
  });

  it("a V1 message with wait: true answers once mined, with its receipt", async () => {
    const res = await postJson(url + "/zkt/try-it-out", { arguments: "waited for", wait: true });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, hash: expect.stringMatching(/^0x/), receipt: { status: "success", blockNumber: expect.any(Number) } });
  });

  it("fields no operation knows are ignored and named in the answer", async () => {
    const res = await postJson(url + "/zkt/try-it-out", { arguments: "hi", network: "testnet", colour: "red" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, ignoredFields: ["network", "colour"] });
  });

  it("the docs' V2 examples: deploy a greeting contract with constructor arguments, read it, write it, with pragma 0.8.24 and ^0.8.20", {
    timeout: 120_000,
  }, async () => {
    const abi = [
      { type: "function", name: "greeting", inputs: [], outputs: [{ name: "", type: "string" }], stateMutability: "view" },
      { type: "function", name: "setGreeting", inputs: [{ name: "g", type: "string" }], outputs: [], stateMutability: "nonpayable" },
    ];
    for (const pragma of ["0.8.24", "^0.8.20"]) {
      const code = `// SPDX-License-Identifier: MIT\npragma solidity ${pragma};\ncontract Greeting {\n  string public greeting;\n  constructor(string memory g) { greeting = g; }\n  function setGreeting(string memory g) public { greeting = g; }\n}`;
      const deployed = await postJson(url + `/zkt/${apiKey}`, { code, arguments: ["hello"] });
      expect(deployed.status, `${pragma}: ${deployed.text}`).toBe(200);
      const to = (deployed.json as { contractAddress: string }).contractAddress;
      const read = async () => ((await postJson(url + `/zkt/${apiKey}`, { to, abi, method: "greeting", arguments: [] })).json as { output: unknown[] }).output;
      expect(await read()).toEqual(["hello"]);
      const write = await postJson(url + `/zkt/${apiKey}`, { to, abi, method: "setGreeting", arguments: ["bonjour"], wait: true });
      expect(write.json).toMatchObject({ success: true, receipt: { status: "success" } });
      expect(await read()).toEqual(["bonjour"]);
    }
  });

  it("the docs' V2 file store example: store a file by name, read it back (pragma 0.8.24)", { timeout: 120_000 }, async () => {
    const code = `// SPDX-License-Identifier: MIT\npragma solidity 0.8.24;\ncontract FileStore {\n  mapping(string => string) private files;\n  function storeFile(string memory name, string memory content) public { files[name] = content; }\n  function getFile(string memory name) public view returns (string memory) { return files[name]; }\n}`;
    const deployed = await postJson(url + `/zkt/${apiKey}`, { code });
    expect(deployed.status, deployed.text).toBe(200);
    const to = (deployed.json as { contractAddress: string }).contractAddress;
    const abi = [
      {
        type: "function",
        name: "storeFile",
        inputs: [
          { name: "name", type: "string" },
          { name: "content", type: "string" },
        ],
        outputs: [],
        stateMutability: "nonpayable",
      },
      { type: "function", name: "getFile", inputs: [{ name: "name", type: "string" }], outputs: [{ name: "", type: "string" }], stateMutability: "view" },
    ];
    const write = await postJson(url + `/zkt/${apiKey}`, { to, abi, method: "storeFile", arguments: ["notes.txt", "hello, chain"], wait: true });
    expect(write.json).toMatchObject({ success: true, receipt: { status: "success" } });
    const read = await postJson(url + `/zkt/${apiKey}`, { to, abi, method: "getFile", arguments: ["notes.txt"] });
    expect((read.json as { output: unknown[] }).output).toEqual(["hello, chain"]);
  });

  it("the OpenAPI document keeps the official path parameter (api_key) and documents what this gateway adds", async () => {
    const doc = (await (await fetch(url + "/zkt/openapi.json")).json()) as {
      paths: Record<string, { post?: { parameters?: { name: string }[]; responses: Record<string, unknown> } }>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    expect(doc.paths["/zkt/{api_key}"]?.post?.parameters?.[0]?.name).toBe("api_key");
    expect(Object.keys(doc.paths["/zkt/{api_key}"]!.post!.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "409", "413", "422", "429", "503"]));
    expect(Object.keys(doc.components.schemas.MessageRequest!.properties)).toContain("wait");
    expect(Object.keys(doc.components.schemas.MessageResponse!.properties)).toEqual(
      expect.arrayContaining(["queueId", "transactionHash", "receipt", "ignoredFields"]),
    );
    expect(Object.keys(doc.components.schemas.DeployRequest!.properties)).toEqual(expect.arrayContaining(["wait", "contractName"]));
  });
});
