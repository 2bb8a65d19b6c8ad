// One address posting one file again and again, each after the last is answered: the fastest a single
// keep-alive client gets. Run as a process of its own, so the test's probe and the gateway share no loop with it.
// Usage: node repeatedPost.mjs <url> <file> <count> <localAddress>; prints {status: count}.
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";

const [url, file, count, from] = process.argv.slice(2);
const body = readFileSync(file);
const agent = new Agent({ localAddress: from });
const statuses = {};
for (let i = 0; i < Number(count); i++) {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
  await res.body.text();
  statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
}
await agent.close();
process.stdout.write(JSON.stringify(statuses));
