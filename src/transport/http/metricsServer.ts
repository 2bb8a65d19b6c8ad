// GET /metrics on a port of its own (METRICS_PORT): served once for every network, on an interface an operator
// picks, and not on the public ports (scraping both network ports counted every series twice).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function serveMetrics(host: string, port: number, text: () => Promise<string>): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?", 1)[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("only GET /metrics is served here\n");
      return;
    }
    text().then(
      (body) => res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
