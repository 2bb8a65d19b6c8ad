// While the gateway starts (it may wait long: for PostgreSQL, for a first node to say the chain's genesis),
// each network's port already answers: alive, not ready (saying why), and every call a 503 with Retry-After in
// its protocol's shape. A load balancer or an orchestrator's probe sees a replica starting, not a refused
// port; the gateway takes each port over just before it serves on it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { GatewayError } from "../errors.js";
import { json, type HttpAnswer } from "./http/restRouter.js";
import { httpStatusForJsonRpc, toJsonRpcError } from "./jsonrpc/errorMap.js";
import { zktErrorAnswer } from "./zkt/errorMap.js";

export interface HeldPorts {
  /** Frees the ports (idempotent). */
  close(): Promise<void>;
}

/** Answers on `ports` (0s are skipped: nothing to hold) until close(); `why` says what the start waits for. */
export async function holdPorts(host: string, ports: number[], why: () => string): Promise<HeldPorts> {
  const servers: Server[] = [];
  const answer = (req: IncomingMessage): HttpAnswer => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (req.method === "GET" && path === "/healthz") return json(200, { status: "ok" });
    if (req.method === "GET" && path === "/readyz") return json(503, { status: "not ready", starting: why(), draining: false, upstreams: [] });
    const err = new GatewayError("upstream_unavailable", `the gateway is starting (${why()}); try again shortly`, { retryAfterSeconds: 2 });
    if (path.startsWith("/zkt")) return zktErrorAnswer(err);
    return json(httpStatusForJsonRpc(err), { jsonrpc: "2.0", id: null, error: toJsonRpcError(err) }, { "retry-after": "2" });
  };
  const respond = (req: IncomingMessage, res: ServerResponse): void => {
    const a = answer(req);
    // The body is not read: the connection closes with the answer.
    res.writeHead(a.status, { ...a.headers, "content-type": a.contentType ?? "application/json", connection: "close" });
    res.end(a.body);
  };
  try {
    for (const port of new Set(ports.filter((p) => p !== 0))) {
      const server = createServer(respond);
      servers.push(server);
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
      // Nothing a client does to a holding port ends the process.
      server.on("error", () => undefined).on("clientError", (_err, socket) => socket.destroy());
    }
  } catch (err) {
    await closeAll(servers);
    throw err;
  }
  let closing: Promise<void> | undefined;
  return { close: () => (closing ??= closeAll(servers)) };
}

async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (!s.listening) return resolve();
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
}
