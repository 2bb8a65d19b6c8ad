// Connect, gRPC and gRPC-Web take request bodies uncompressed, as the JSON-RPC and ZKT paths do (415 there):
// a few KB of gzip expand to the body limit after the gate has weighed them by their compressed size, and
// past the body budget, which counts the bytes that arrive. Responses are still compressed for a client that
// accepts it. The refusal comes after the gate, so it costs its caller one request.
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import type { Compression } from "@connectrpc/connect/protocol";
import { GatewayError } from "../../errors.js";
import { asConnectError } from "./errorMap.js";

function responsesOnly(compression: Compression): Compression {
  const refused = `${compression.name}-compressed requests are not supported: send the message uncompressed`;
  return {
    name: compression.name,
    compress: (bytes) => compression.compress(bytes),
    decompress: () => Promise.reject(asConnectError(new GatewayError("unsupported_encoding", refused))),
  };
}

/** connect-node's own list (gzip, brotli), for responses only. */
export const responseCompression: Compression[] = [compressionGzip, compressionBrotli].map(responsesOnly);
