// A TCP proxy in its own process, so a test can freeze it with SIGSTOP as an operator's network would freeze
// (packets held, nothing reset): node tcpProxy.mjs <targetHost> <targetPort>; prints its port on stdout.
import net from "node:net";

const [host, port] = [process.argv[2], Number(process.argv[3])];
const server = net.createServer((client) => {
  const upstream = net.connect({ host, port });
  const drop = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", drop).on("close", drop);
  upstream.on("error", drop).on("close", drop);
  client.pipe(upstream).pipe(client);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
