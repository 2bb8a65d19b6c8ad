// Reads a request body up to a limit. Connect's readMaxBytes covers only Connect paths; this covers the rest.
import type { NodeServerRequest } from "./nodeTypes.js";
import { GatewayError } from "../../errors.js";

export async function readBody(req: NodeServerRequest, limit: number): Promise<string> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError("payload_too_large", `request body exceeds the ${formatBytes(limit)} limit`, { details: { limitBytes: limit } });
}

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MB` : `${n} bytes`;
}
