// A Connect/gRPC path called with a content type none of the three protocols speaks (curl's default, or
// none at all) gets Connect's 415 with an empty body; this answers the same 415 with a Connect error body
// that says what to send.
import type { NodeHandlerFn } from "../http/nodeTypes.js";

/** The services' paths: /<package>.<Service>/<Method>. */
const PROCEDURE = /^\/(chaingateway\.[a-z0-9_.]+|grpc\.reflection\.v1(alpha)?)\.[A-Za-z]+\/[A-Za-z]+$/;
const SPOKEN = /^application\/(json|proto|connect\+(json|proto)|grpc(-web)?(\+(proto|json))?|grpc-web-text(\+proto)?)(;|$)/i;
const BODY = JSON.stringify({
  code: "invalid_argument",
  message: "unsupported content-type: send application/json or application/proto (Connect), application/grpc (gRPC) or application/grpc-web (gRPC-Web)",
});

export function withMediaTypeHint(handler: NodeHandlerFn): NodeHandlerFn {
  return (req, res) => {
    if (req.method !== "POST" || !PROCEDURE.test((req.url ?? "").split("?")[0]!) || SPOKEN.test(req.headers["content-type"] ?? "")) return handler(req, res);
    res.writeHead(415, { "content-type": "application/json", "content-length": Buffer.byteLength(BODY) });
    res.end(BODY);
  };
}
