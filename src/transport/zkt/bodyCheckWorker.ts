// The worker thread of bodyCheck.ts (bundled as dist/bodyCheckWorker.mjs): decodes and parses a large ZKT body
// and runs the checks that refuse a body by its shape and its ABI's size, so a refused one never touches the
// event loop's heap. It answers the refusal as data, or nothing: a body that passes is parsed again on the
// loop, like any other (handing a parsed body over would copy it twice, and a deeply nested one would not
// cross at all).
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { GatewayError, type JsonValue } from "../../errors.js";
import { checkAbiBounds } from "../../zkt/abiBounds.js";
import type { BodyCheckAnswer, BodyCheckJob } from "./bodyCheckMessages.js";
import { idOf, parseZktBody } from "./parseZktBody.js";

const port = parentPort;
if (!port) throw new Error("bodyCheckWorker runs as a worker thread of bodyCheck.ts");
// Below the event loop: on a busy machine, a thread waking to check one caller's refused body must not take
// the core from the loop that answers everyone else. On Linux a priority is a thread's own; elsewhere it
// would be the whole process's, so it is left.
if (process.platform === "linux") setPriority(10);

function check(job: BodyCheckJob): BodyCheckAnswer {
  let body: JsonValue;
  try {
    body = JSON.parse(Buffer.from(job.slot, 0, job.length).toString("utf8")) as JsonValue;
  } catch {
    return { refused: { kind: "validation", message: "the body is not valid JSON" } };
  }
  try {
    const op = parseZktBody(body);
    if (op.op === "call") checkAbiBounds(op.abi);
  } catch (err) {
    // The same refusal, in the same order, the route and the handlers would give a small body; anything
    // else is left to the loop's own parse to meet and answer.
    if (!(err instanceof GatewayError)) return {};
    const { kind, message, details } = err;
    return { refused: { kind, message, ...(details === undefined ? {} : { details }) }, id: idOf(body) };
  }
  return {};
}

port.on("message", (job: BodyCheckJob) => {
  port.postMessage({ seq: job.seq, ...check(job) });
});
