// Connections that each send a head and all but 100 bytes of a 1 MB body, then hold it: run as a process of
// its own, so the memory measured in the test is the gateway's alone.
// Usage: node heldBodies.mjs <port> <connections> [chunked | h2]; prints "ready" once every connection is open
// or refused, closes them all at a line on stdin, and prints {"refused"} as it exits. With h2, <connections>
// is sessions of 100 such streams each.
import http2 from "node:http2";
import net from "node:net";

const [port, count, framing] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const chunked = framing === "chunked";
const MB = 1024 * 1024;
const part = Buffer.alloc(MB - 100, 0x20);
const sockets = [];
let refused = 0;

function open() {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" });
    sockets.push(s);
    s.on("error", () => undefined);
    s.on("data", (d) => {
      if (d.toString().startsWith("HTTP/1.1 503")) refused++;
    });
    s.on("close", () => resolve());
    s.on("connect", () => {
      if (chunked) {
        s.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
        s.write(`${part.length.toString(16)}\r\n`);
        s.write(part);
        s.write("\r\n");
      } else {
        s.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${MB}\r\n\r\n`);
        s.write(part);
      }
      resolve();
    });
  });
}

/** A session of 100 streams, each declaring 1 MB and sending all but 100 bytes of it; resolves once they are opened. */
function openSession() {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    sockets.push(session);
    session.on("error", () => resolve());
    session.on("close", () => resolve());
    session.on("remoteSettings", () => {
      for (let i = 0; i < 100; i++) {
        const stream = session.request({ ":method": "POST", ":path": "/", "content-type": "application/json", "content-length": String(MB) });
        stream.on("error", () => undefined);
        stream.on("response", (h) => {
          if (h[":status"] === 503) refused++;
        });
        stream.write(part);
      }
      resolve();
    });
  });
}

if (framing === "h2") {
  for (let i = 0; i < count; i++) await openSession();
  // Time for the bodies to arrive (the sessions' writes are not waited on: a refused stream's never ends).
  await new Promise((r) => setTimeout(r, 3_000));
}
// 150 at a time: more at once overflow the kernel's accept queue.
else for (let wave = 0; wave < count; wave += 150) await Promise.all(Array.from({ length: Math.min(150, count - wave) }, open));
process.stdout.write("ready\n");
process.stdin.once("data", () => {
  for (const s of sockets) s.destroy();
  process.stdout.write(`${JSON.stringify({ refused })}\n`);
  process.exit(0);
});
