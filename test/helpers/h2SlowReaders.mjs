// HTTP/2 clients that ask for answers and never take them: each session is opened with a 1-byte flow-control
// window and its response streams are paused, so the server can send one byte of each answer and must hold
// the rest. Run as a process of its own, so the memory measured in the test is the gateway's alone.
// Usage: node h2SlowReaders.mjs <port> <ip,ip,...> <sessions per ip> <streams per session> <json body>
// Prints {"answered","reset"} once every stream has its answer's head or was reset; closes every session at a
// line on stdin and prints "closed".
import http2 from "node:http2";

const [port, ipList, sessionsPerIp, streamsPerSession, body] = process.argv.slice(2);
const sessions = [];
let answered = 0;
let reset = 0;
const waits = [];
for (const ip of ipList.split(",")) {
  for (let s = 0; s < Number(sessionsPerIp); s++) {
    const session = http2.connect(`http://127.0.0.1:${port}`, { localAddress: ip, settings: { initialWindowSize: 1 } });
    session.on("error", () => undefined);
    sessions.push(session);
    for (let i = 0; i < Number(streamsPerSession); i++) {
      const req = session.request({ ":method": "POST", ":path": "/", "content-type": "application/json" });
      req.on("error", () => undefined);
      req.end(body);
      waits.push(
        new Promise((resolve) => {
          req.once("response", () => {
            answered++;
            req.pause();
            resolve();
          });
          req.once("close", () => {
            if (req.rstCode) reset++;
            resolve();
          });
        }),
      );
    }
  }
}
await Promise.all(waits);
process.stdout.write(`${JSON.stringify({ answered, reset })}\n`);
process.stdin.once("data", async () => {
  for (const s of sessions) s.destroy();
  process.stdout.write("closed\n");
  process.exit(0);
});
