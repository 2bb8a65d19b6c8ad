// One address posting one file again and again, each after the last is answered: the fastest a single
// keep-alive client gets. Run as a process of its own, so the test's probe and the gateway share no loop with it.
// Usage: node repeatedPost.mjs <url> <file> <count> <localAddress> [chunked]; prints {status or error code: count}.
// `chunked`: the body sent in 64 KB pieces of no declared length (Transfer-Encoding: chunked).
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";

const [url, file, count, from, framing] = process.argv.slice(2);
const body = readFileSync(file);
const pieces = function* () {
  for (let at = 0; at < body.length; at += 65536) yield body.subarray(at, at + 65536);
};
const agent = new Agent({ localAddress: from });
const statuses = {};
for (let i = 0; i < Number(count); i++) {
  let outcome;
  try {
    const res = await request(url, {
      method: "POST",
      body: framing === "chunked" ? pieces() : body,
      headers: { "content-type": "application/json" },
      dispatcher: agent,
    });
    await res.body.text();
    outcome = res.statusCode;
  } catch (err) {
    // A refused body's connection is closed before the rest of it is sent (EPIPE): the client's to count.
    outcome = err.code ?? "error";
  }
  statuses[outcome] = (statuses[outcome] ?? 0) + 1;
}
await agent.close();
process.stdout.write(JSON.stringify(statuses));
