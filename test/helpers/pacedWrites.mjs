// ZKT message writes sent at a fixed pace, each on time whether or not the last was answered, taking the given
// keys in turn. Run as a process of its own, so the test's probe shares no loop with 200 requests a second.
// Usage: node pacedWrites.mjs <gatewayUrl> <count> <perSecond> <key>...; prints {"statuses": {status: count}, "ms"}.
import { request } from "undici";

const [url, count, perSecond, ...keys] = process.argv.slice(2);
const statuses = {};
const started = performance.now();
const writes = [];
for (let i = 0; i < Number(count); i++) {
  const wait = started + (i * 1000) / Number(perSecond) - performance.now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  writes.push(
    request(`${url}/zkt/${keys[i % keys.length]}`, {
      method: "POST",
      body: JSON.stringify({ arguments: `burst ${i}` }),
      headers: { "content-type": "application/json" },
    }).then(async (res) => {
      await res.body.text();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    }),
  );
}
await Promise.all(writes);
process.stdout.write(JSON.stringify({ statuses, ms: Math.round(performance.now() - started) }));
