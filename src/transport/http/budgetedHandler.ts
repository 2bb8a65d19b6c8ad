// Request bodies held against the port's body budget (bodyBudget.ts) on node:http and HTTP/2 (the fast lane
// holds its own): a declared body until its answer is done, refused (503) before a byte of it is read when it
// does not fit; a body of no declared length as it arrives.
import type { IncomingHttpHeaders } from "node:http";
import http2 from "node:http2";
import type { BodyBudget } from "./bodyBudget.js";
import { normalise } from "./clientIp.js";
import type { NodeHandlerFn } from "./nodeTypes.js";
import { spillArriving } from "./spillArriving.js";

const BODY_REFUSED = JSON.stringify({ error: "the server is receiving too many request bodies at once; try again shortly" });

/** A request refused for room, told by its socket's address and headers (who the caller is, behind a proxy). */
export type BodyRefused = (remoteAddress: string | undefined, headers: IncomingHttpHeaders) => void;

type Req = Parameters<NodeHandlerFn>[0];
type Res = Parameters<NodeHandlerFn>[1];

export interface BudgetedHandlerOptions {
  budget: BodyBudget;
  /** One past any IP's share is no body the routes read: theirs is a 413. */
  perIpBytes: number;
  /** Closes an HTTP/2 stream from this side (its reset is not counted as the peer's). */
  closeStream: (stream: http2.Http2Stream, code: number) => void;
  /** Each request's start and end, for a shutdown to wait on. */
  inFlight: { n: number };
  /** A declared body refused before any route or gate saw it (one arriving unbounded is counted where it is read). */
  refused?: BodyRefused;
}

/** What each body of no declared length has taken in so far (the one measure of its size there is). */
const arrived = new WeakMap<object, () => number>();

/** Bytes a request body of no declared length has taken in so far (0 for any other request). */
export function bytesArrived(req: object): number {
  return arrived.get(req)?.() ?? 0;
}

export function budgetedHandler(inner: NodeHandlerFn, o: BudgetedHandlerOptions): NodeHandlerFn {
  return (req, res) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > 0 && declared <= o.perIpBytes) {
      const ip = normalise(req.socket?.remoteAddress ?? "unknown");
      const session = "stream" in req ? req.stream.session : undefined;
      if (!o.budget.reserve(ip, declared, session)) {
        o.refused?.(req.socket?.remoteAddress, req.headers);
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1", ...(req.httpVersionMajor === 1 ? { connection: "close" } : {}) });
        res.end(BODY_REFUSED);
        return;
      }
      res.once("close", () => o.budget.release(ip, declared, session));
      spillArriving(req, declared);
    } else if (!(declared >= 0) && req.method !== "GET" && req.method !== "HEAD") {
      budgetAsItArrives(req, res, o);
      spillArriving(req, 0);
    }
    o.inFlight.n++;
    res.once("close", () => o.inFlight.n--);
    return inner(req, res);
  };
}

/**
 * A body of no declared length (gRPC over HTTP/2, a chunked HTTP/1.1 body) is counted as it arrives: each
 * piece the stream takes in is held against the budget until the answer is done. Past the budget the stream
 * is reset (the connection, on HTTP/1.1). Counted where the request takes its bytes in (push), so whoever
 * reads it, and whenever, reads it unchanged.
 */
function budgetAsItArrives(req: Req, res: Res, o: BudgetedHandlerOptions): void {
  const ip = normalise(req.socket?.remoteAddress ?? "unknown");
  const session = "stream" in req ? req.stream.session : undefined;
  let held = 0;
  arrived.set(req, () => held);
  const push = req.push;
  req.push = function budgeted(this: typeof req, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && chunk !== undefined) {
      const n = typeof chunk === "string" ? Buffer.byteLength(chunk, encoding) : (chunk as Uint8Array).length;
      if (!o.budget.reserve(ip, n, session)) {
        req.push = push;
        if ("stream" in req) o.closeStream(req.stream, http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
        else req.socket.destroy();
        return false;
      }
      held += n;
    }
    return push.call(this, chunk, encoding);
  } as typeof req.push;
  res.once("close", () => o.budget.release(ip, held, session));
}
