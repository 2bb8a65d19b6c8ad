// A request body still arriving is kept where it gives its memory back (memory/largeBody.ts): each piece the
// request takes in past the first PASS_BYTES is copied into a mapping of the request's own, and the socket's
// read buffer is let go (held by slow senders in the heap instead, the heap keeps the space after they close).
// Done where the request takes its bytes in (push), so node:http,
// HTTP/2 and every reader (the routes' readBody, connect-node) read the same bytes unchanged.
import { giveBack, LargeBody, SPILL_AT } from "../../memory/largeBody.js";
import type { NodeServerRequest } from "./nodeTypes.js";

/** A body of no declared length passes this much through as it came (a gRPC message is usually smaller). */
const PASS_BYTES = 64 * 1024;

/** `declared`: the body's Content-Length (0: none). Bodies declared up to SPILL_AT are left alone. */
export function spillArriving(req: NodeServerRequest, declared: number): void {
  if (declared > 0 && declared <= SPILL_AT) return;
  let body = declared > 0 ? new LargeBody(declared) : undefined;
  let passed = 0;
  // node:http hands each piece of a body over as a copy of its own (the parser's Buffer::Copy), so its
  // memory can be given back once copied again; an HTTP/2 piece is a view into the session's read buffer,
  // which is the session's (left to the GC).
  const own = !("stream" in req);
  const push = req.push;
  req.push = function spilled(this: typeof req, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (!Buffer.isBuffer(chunk)) return push.call(this, chunk, encoding);
    if (!body) {
      passed += chunk.length;
      if (passed <= PASS_BYTES) return push.call(this, chunk, encoding);
      body = new LargeBody(0, true);
    }
    const kept = body.push(chunk);
    if (own) giveBack(chunk);
    return push.call(this, kept, encoding);
  } as typeof req.push;
}
