// A conventional minimal Node.js JSON-RPC proxy: node:http in, an undici keep-alive pool out, no parsing, no
// policy. The bench runs it beside the gateway so the cost of the usual Node.js stack is visible apart from ours.
import http from "node:http";
import { Pool } from "undici";

const [upstream, port] = [process.argv[2]!, Number(process.argv[3] ?? 0)];
const pool = new Pool(upstream, { connections: 128 });
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    pool
      .request({ path: "/", method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) })
      .then(async (r) => {
        const text = await r.body.text();
        res.writeHead(r.statusCode, { "content-type": "application/json" }).end(text);
      })
      .catch(() => res.writeHead(502).end());
  });
});
server.listen(port, "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
