// One port, HTTP/1.1 and cleartext HTTP/2 (gRPC needs h2): Node refuses allowHTTP1 without TLS, so we read
// the first bytes of each connection and hand the socket to the http2 or http server accordingly.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { NodeHandlerFn } from "./nodeTypes.js";

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface DualServer {
  port: number;
  close(): Promise<void>;
}

export async function listenDual(handler: NodeHandlerFn, host: string, port: number): Promise<DualServer> {
  const h1 = http.createServer(handler as http.RequestListener);
  h1.keepAliveTimeout = 65_000;
  const h2 = http2.createServer({}, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && seen.length < H2_PREFACE.length) return; // need more bytes to decide
      socket.off("data", onData);
      socket.pause();
      socket.unshift(seen);
      if (isH2) {
        // http2 drains the socket's buffered bytes itself on the next tick; resuming here would lose them.
        h2.emit("connection", socket);
      } else {
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        h1.closeAllConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}
