// The ZKT OpenAPI 3.0.3 document served at GET /zkt/openapi.json. Tests validate real requests and
// responses against it, so it cannot drift from what the server does.
import { errorKinds } from "../../errors.js";

const address = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" };
const hash = { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" };
const id = { oneOf: [{ type: "string" }, { type: "number" }], description: "Request identifier, echoed in the response." };
const abiEntry = { oneOf: [{ type: "string", description: 'Human-readable, e.g. "function balanceOf(address) view returns (uint256)"' }, { type: "object" }] };
const jsonValue = {};

const errorResponse = {
  type: "object",
  required: ["success", "error", "errorCode"],
  additionalProperties: false,
  properties: {
    success: { type: "boolean", enum: [false] },
    error: { type: "string", description: "What went wrong, for people." },
    errorCode: {
      type: "string",
      // Every code the error family can answer with, so the document cannot miss one (415's did).
      enum: [...new Set(Object.values(errorKinds).map((k) => k.zktCode))],
    },
    details: { description: "Machine-readable specifics: compiler messages with line/column, revert reason and data, …" },
    id,
  },
};

const receipt = {
  type: "object",
  required: ["status", "blockNumber", "blockHash", "gasUsed", "logs"],
  additionalProperties: false,
  properties: {
    status: { type: "string", enum: ["success", "reverted"] },
    blockNumber: { type: "integer" },
    blockHash: hash,
    gasUsed: { type: "string", description: "Decimal." },
    contractAddress: { ...address, nullable: true },
    logs: {
      type: "array",
      items: {
        type: "object",
        required: ["address", "event", "args", "topics", "data", "logIndex"],
        additionalProperties: false,
        properties: {
          address,
          event: { type: "string", nullable: true, description: "Event name when the request's ABI has it." },
          args: { type: "object", nullable: true, description: "Decoded arguments by name; integers as decimal strings." },
          topics: { type: "array", items: hash },
          data: { type: "string" },
          logIndex: { type: "integer" },
        },
      },
    },
  },
};

const okBase = {
  success: { type: "boolean", enum: [true] },
  id,
  ignoredFields: {
    type: "array",
    items: { type: "string" },
    description: "This gateway: request fields no operation knows, ignored (named so a typo does not pass unseen).",
  },
};

export const openApiDocument = {
  openapi: "3.0.3",
  info: {
    title: "chain-gateway ZKT API (beta)",
    version: "1.0.0",
    description:
      "Write messages, read and write contract functions, and deploy contracts with plain HTTP POSTs. The " +
      "body's shape selects the operation: V1 message {arguments: string, wait?}; V2 call {to, abi, " +
      "method, arguments: [], wait?}; V2 deploy {code, arguments?, contractName?, wait?}. Experimental. " +
      "Stability's official shapes, plus what this gateway adds: queueId and transactionHash in every " +
      "write answer, receipt when waiting, wait on messages and deploys, contractName, ignoredFields, GET " +
      "/zkt/transactions/{queueId}, an Idempotency-Key header, and an HTTP status per error (the hosted " +
      "service answers 200 with success: false).",
  },
  paths: {
    "/zkt/try-it-out": {
      post: {
        summary: "Submit with the shared public signer",
        operationId: "submitPublic",
        requestBody: { $ref: "#/components/requestBodies/ZktRequest" },
        responses: { $ref: "#/components/x-submitResponses" },
      },
    },
    "/zkt/{api_key}": {
      post: {
        summary: "Submit signed by the API key's own wallet",
        operationId: "submitWithKey",
        parameters: [{ name: "api_key", in: "path", required: true, schema: { type: "string" } }],
        requestBody: { $ref: "#/components/requestBodies/ZktRequest" },
        responses: { $ref: "#/components/x-submitResponses" },
      },
    },
    "/zkt/transactions/{queueId}": {
      get: {
        summary: "Status of a submission",
        operationId: "getTransactionStatus",
        parameters: [{ name: "queueId", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": { description: "The submission", content: { "application/json": { schema: { $ref: "#/components/schemas/TransactionStatus" } } } },
          "404": { description: "Unknown queueId", content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } } },
        },
      },
    },
  },
  components: {
    requestBodies: {
      ZktRequest: {
        required: true,
        content: {
          "application/json": {
            schema: {
              oneOf: [
                { $ref: "#/components/schemas/MessageRequest" },
                { $ref: "#/components/schemas/ContractCallRequest" },
                { $ref: "#/components/schemas/DeployRequest" },
              ],
            },
          },
        },
      },
    },
    "x-submitResponses": {},
    schemas: {
      MessageRequest: {
        type: "object",
        description: "V1: write a message. A transaction to the network's message recipient whose data is the message's UTF-8 bytes.",
        required: ["arguments"],
        properties: {
          arguments: { type: "string", minLength: 1 },
          wait: { type: "boolean", description: "This gateway: return after mining, with the receipt." },
          callbackUrl: {
            type: "string",
            format: "uri",
            description: "This gateway, with an API key: POST this write's outcome there, signed (docs/WEBHOOKS.md).",
          },
          id,
        },
      },
      ContractCallRequest: {
        type: "object",
        description: "V2: call a contract function. view/pure functions are read with eth_call; others are signed and submitted.",
        required: ["to", "abi", "method", "arguments"],
        properties: {
          to: address,
          abi: { type: "array", minItems: 1, items: abiEntry },
          method: { type: "string", minLength: 1, description: "Function name, or full signature for an overload." },
          arguments: {
            type: "array",
            items: jsonValue,
            description: "Strings (numbers decimal or 0x, booleans, JSON text for arrays/tuples) or native JSON values.",
          },
          wait: { type: "boolean", description: "Return after mining, with the receipt." },
          callbackUrl: {
            type: "string",
            format: "uri",
            description: "This gateway, with an API key: POST this write's outcome there, signed (docs/WEBHOOKS.md).",
          },
          id,
        },
      },
      DeployRequest: {
        type: "object",
        description:
          "V2: compile Solidity source (the newest shipped solc its pragma allows: 0.8.37, 0.8.24, 0.8.19; " +
          "@openzeppelin/contracts imports resolve) and deploy; returns once mined, or with wait: false once " +
          "signed and journaled.",
        required: ["code"],
        properties: {
          code: { type: "string", minLength: 1 },
          arguments: { type: "array", items: jsonValue },
          contractName: { type: "string" },
          wait: { type: "boolean", default: true, description: "false: answer before mining; contractAddress is where the contract will be." },
          callbackUrl: {
            type: "string",
            format: "uri",
            description: "This gateway, with an API key: POST this write's outcome there, signed (docs/WEBHOOKS.md).",
          },
          id,
        },
      },
      MessageResponse: {
        type: "object",
        required: ["success", "hash", "transactionHash", "queueId"],
        additionalProperties: false,
        properties: { ...okBase, hash, transactionHash: hash, queueId: { type: "string" }, receipt: { $ref: "#/components/schemas/Receipt" } },
      },
      ReadResponse: {
        type: "object",
        required: ["success", "output"],
        additionalProperties: false,
        properties: {
          ...okBase,
          output: { type: "array", items: jsonValue, description: "Return values in order, tuples flattened, integers as decimal strings." },
        },
      },
      WriteResponse: {
        type: "object",
        required: ["success", "hash", "transactionHash", "queueId"],
        additionalProperties: false,
        properties: { ...okBase, hash, transactionHash: hash, queueId: { type: "string" }, receipt: { $ref: "#/components/schemas/Receipt" } },
      },
      DeployResponse: {
        type: "object",
        required: ["success", "contractAddress", "abi", "hash", "transactionHash", "queueId"],
        additionalProperties: false,
        properties: {
          ...okBase,
          contractAddress: address,
          abi: {
            type: "array",
            items: {
              type: "object",
              required: ["type"],
              properties: {
                type: { type: "string" },
                name: { type: "string" },
                inputs: { type: "array" },
                outputs: { type: "array" },
                stateMutability: { type: "string" },
              },
            },
          },
          hash,
          transactionHash: hash,
          queueId: { type: "string" },
        },
      },
      Receipt: receipt,
      ErrorResponse: errorResponse,
      TransactionStatus: {
        type: "object",
        required: ["queueId", "status", "transactionHash", "errorMessage", "createdAt", "processedAt", "statusReason"],
        additionalProperties: false,
        properties: {
          queueId: { type: "string" },
          status: { type: "string", enum: ["pending", "processing", "completed", "error"] },
          transactionHash: hash,
          errorMessage: { type: "string", nullable: true },
          createdAt: { type: "string", format: "date-time" },
          processedAt: { type: "string", format: "date-time", nullable: true },
          statusReason: {
            type: "string",
            nullable: true,
            description: "Why a write went back to processing (the node lost the block it was mined in); null otherwise.",
          },
        },
      },
    },
  },
};

const submitResponses = {
  "200": {
    description: "Success; which shape depends on the operation.",
    content: {
      "application/json": {
        // anyOf: a message reply is also a valid write reply without a receipt.
        schema: {
          anyOf: [
            { $ref: "#/components/schemas/MessageResponse" },
            { $ref: "#/components/schemas/ReadResponse" },
            { $ref: "#/components/schemas/WriteResponse" },
            { $ref: "#/components/schemas/DeployResponse" },
          ],
        },
      },
    },
  },
  ...Object.fromEntries(
    [
      ["400", "VALIDATION_ERROR or COMPILATION_ERROR: the body is malformed, an argument is wrong, or the source does not compile"],
      ["401", "UNAUTHORIZED: unknown or revoked API key"],
      ["403", "FORBIDDEN_TARGET: the key may not write to that address"],
      ["409", "VALIDATION_ERROR: a request with this Idempotency-Key is still in progress"],
      ["413", "PAYLOAD_TOO_LARGE: body over 1 MB"],
      ["415", "UNSUPPORTED_MEDIA_TYPE: a compressed body (Content-Encoding gzip, deflate, br); send it uncompressed"],
      ["422", "TXN_NOT_PROCESSED: the node rejected the transaction or it reverted; VALIDATION_ERROR: an Idempotency-Key reused with another body"],
      ["429", "RATE_LIMITED: over the caller's limit; QUOTA_EXCEEDED: the key's write quota is spent; see Retry-After"],
      ["503", "UPSTREAM_UNAVAILABLE: no node reachable, or not mined in time"],
    ].map(([code, description]) => [code, { description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } } }]),
  ),
};

// OpenAPI has no $ref for a whole responses map; inline the same map on both submit paths.
for (const path of ["/zkt/try-it-out", "/zkt/{api_key}"] as const) openApiDocument.paths[path].post.responses = submitResponses as never;
delete (openApiDocument.components as Record<string, unknown>)["x-submitResponses"];
