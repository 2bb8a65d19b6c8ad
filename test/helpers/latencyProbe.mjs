// A steady caller in a process of its own: POSTs one body one after another (a pause between) over a
// keep-alive connection until a line arrives on stdin, then prints its latencies (ms) and the longest its own
// event loop was held, as JSON. Its measurements carry no test runner's pauses. Prints "ready" once its
// connection is open (one request answered, not counted).
// Usage: node latencyProbe.mjs <url> <body> <gapMs>
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Agent, request } from "undici";

const [url, body, gapMs] = process.argv.slice(2);
const agent = new Agent({ connections: 1 });
const post = async () => {
  const res = await request(url, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
  await res.body.text();
};
await post();
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
process.stdout.write("ready\n");
let running = true;
process.stdin.once("data", () => (running = false));
const latencies = [];
while (running) {
  const t = performance.now();
  await post();
  latencies.push(performance.now() - t);
  await new Promise((r) => setTimeout(r, Number(gapMs)));
}
loop.disable();
await agent.close();
process.stdout.write(JSON.stringify({ latencies, loopMax: loop.max / 1e6 }));
process.stdin.destroy();
