// The least any Node.js proxy can do per request: node:net in, one upstream connection per client connection,
// bytes copied both ways unread (no HTTP parsing, no JSON, no policy). The bench times it beside nginx and the
// gateway at moderate load, so the gateway's added tail latency can be split into what Node.js itself costs on
// this machine (waking the event loop twice per request, two socket reads and writes) and what its own code adds.
import net from "node:net";

const upstream = new URL(process.argv[2]!);
const server = net.createServer((client) => {
  const node = net.connect(Number(upstream.port), upstream.hostname);
  for (const socket of [client, node]) {
    socket.setNoDelay(true);
    socket.on("error", () => {
      client.destroy();
      node.destroy();
    });
  }
  client.pipe(node).pipe(client);
});
server.listen(Number(process.argv[3] ?? 0), "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as net.AddressInfo).port}\n`));
