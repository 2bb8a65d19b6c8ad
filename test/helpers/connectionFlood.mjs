// A client that holds `hold` connections from one address, then reconnects from it as fast as it can
// (`loops` connections at a time, each opened again the moment the server closes it), for `seconds`; with
// "call", each connection sends one JSON-RPC call (connection: close), as a client that never keeps one alive.
// Usage: node connectionFlood.mjs <port> <seconds> <localAddress> <hold> [loops] [call]
// Prints {"connections","answered503","answeredOther","closedUnanswered"} at the end.
import net from "node:net";

const [port, seconds, localAddress, hold, loops] = [
  Number(process.argv[2]),
  Number(process.argv[3]),
  process.argv[4],
  Number(process.argv[5] ?? 0),
  Number(process.argv[6] ?? 50),
];
const call = process.argv[7] === "call";
const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const REQUEST = `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\nconnection: close\r\n\r\n${BODY}`;
const stats = { connections: 0, answered503: 0, answeredOther: 0, closedUnanswered: 0 };
const held = [];
for (let i = 0; i < hold; i++) held.push(net.connect({ port, host: "127.0.0.1", localAddress }).on("error", () => undefined));
await new Promise((r) => setTimeout(r, 500));
const end = Date.now() + seconds * 1000;
function connect() {
  if (Date.now() > end) return;
  stats.connections++;
  let answered = false;
  const s = net.connect({ port, host: "127.0.0.1", localAddress });
  s.on("error", () => undefined);
  if (call) s.on("connect", () => s.write(REQUEST));
  s.on("data", (d) => {
    if (!answered) {
      if (d.toString("latin1", 0, 12) === "HTTP/1.1 503") stats.answered503++;
      else stats.answeredOther++;
    }
    answered = true;
  });
  s.on("close", () => {
    if (!answered) stats.closedUnanswered++;
    connect();
  });
}
for (let i = 0; i < loops; i++) connect();
setTimeout(
  () => {
    process.stdout.write(JSON.stringify(stats));
    process.exit(0);
  },
  seconds * 1000 + 300,
);
