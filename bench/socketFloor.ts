// The least a Node.js server can spend per answer on this machine: node:net, one fixed JSON-RPC answer per
// request read, no parsing beyond framing, no policy. The bench measures eth_chainId on it beside anvil and the
// gateway, so the gateway's CPU per answer can be split into what any Node.js server pays (the socket reads and
// writes, mostly in the kernel) and what its own code adds.
import net from "node:net";

const body = '{"jsonrpc":"2.0","id":1,"result":"0x133edcb"}';
const answer = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
const LENGTH = /content-length: *(\d+)/i;

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on("error", () => socket.destroy());
  let pending = "";
  socket.on("data", (chunk: Buffer) => {
    pending += chunk.toString("latin1");
    let out = "";
    for (;;) {
      const end = pending.indexOf("\r\n\r\n");
      if (end < 0) break;
      const length = Number(LENGTH.exec(pending.slice(0, end))?.[1] ?? 0);
      if (pending.length < end + 4 + length) break;
      pending = pending.slice(end + 4 + length);
      out += answer;
    }
    if (out) socket.write(out);
  });
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => process.stdout.write(`listening ${(server.address() as net.AddressInfo).port}\n`));
