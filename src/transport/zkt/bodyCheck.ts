// A large ZKT body is decoded, parsed and checked on a worker thread (bodyCheckWorker.ts), not on the event
// loop: a flood of oversized bodies, each refused, would otherwise hold the loop and churn its heap for every
// other caller (bench/README.md, "Hand-made at the edge"). Small bodies are parsed in place: the hop costs
// more than they do. One worker for the process, started on the first large body, stopped when idle.
import { Worker } from "node:worker_threads";
import { GatewayError } from "../../errors.js";
import { workerEntry } from "../../workerEntry.js";
import type { BodyCheckAnswer, BodyCheckJob } from "./bodyCheckMessages.js";

/** Bodies larger than this are checked off the loop. */
export const OFF_LOOP_BYTES = 64 * 1024;
/** After this long without a body the worker is stopped (its heap given back). */
const IDLE_MS = 30_000;
/** Bodies handed over at once; more wait for a slot. */
const SLOTS = 4;
/** A slot's size, unless a body needs more. */
const SLOT_BYTES = 1024 * 1024;

interface Waiting {
  slot: SharedArrayBuffer;
  resolve(answer: BodyCheckAnswer): void;
  reject(err: Error): void;
}

let worker: Worker | undefined;
const waiting = new Map<number, Waiting>();
let seq = 0;
let idle: NodeJS.Timeout | undefined;
/**
 * Shared memory the bodies are copied into for the worker, reused: a fresh buffer per body would be memory
 * the GC must be pressed to free, on the loop, body after body.
 */
const free: SharedArrayBuffer[] = [];
let slotsMade = 0;
const slotWanted: (() => void)[] = [];

/** The worker's entry: beside the bundle (dist/bodyCheckWorker.mjs), or from source under tsx (tests, `npm run dev`). */
const entry = () => workerEntry(import.meta.url, "./bodyCheckWorker");

function started(): Worker {
  if (worker) return worker;
  const { path, execArgv } = entry();
  const w = new Worker(path, { execArgv });
  w.unref();
  w.on("message", (answer: BodyCheckAnswer & { seq: number }) => {
    const job = waiting.get(answer.seq);
    waiting.delete(answer.seq);
    if (!job) return;
    release(job.slot);
    job.resolve(answer);
    if (waiting.size === 0) idle = setTimeout(stop, IDLE_MS).unref();
  });
  const lost = (err: Error): void => {
    if (worker !== w) return;
    worker = undefined;
    const jobs = [...waiting.values()];
    waiting.clear();
    for (const job of jobs) {
      release(job.slot);
      job.reject(new GatewayError("internal", "the body check failed", { cause: err }));
    }
  };
  w.on("error", lost);
  w.on("exit", (code) => lost(new Error(`the body check's worker exited (${code})`)));
  worker = w;
  return w;
}

function stop(): void {
  if (waiting.size > 0 || !worker) return;
  const w = worker;
  worker = undefined;
  free.length = 0;
  slotsMade = 0;
  void w.terminate();
}

/** A slot of at least `size` bytes, when one is free or may be made. */
function takeSlot(size: number): SharedArrayBuffer | undefined {
  const i = free.findIndex((s) => s.byteLength >= size);
  if (i >= 0) return free.splice(i, 1)[0];
  if (slotsMade >= SLOTS) {
    // Every slot made is free but too small for this body: one is replaced.
    if (free.length === 0) return undefined;
    free.pop();
    slotsMade--;
  }
  slotsMade++;
  return new SharedArrayBuffer(Math.max(size, SLOT_BYTES));
}

function release(slot: SharedArrayBuffer): void {
  free.push(slot);
  slotWanted.shift()?.();
}

/** The body checked off the loop: the refusal a handler would have given, or none. */
export async function checkLargeBody(bytes: Uint8Array): Promise<BodyCheckAnswer> {
  clearTimeout(idle);
  let slot = takeSlot(bytes.length);
  while (!slot) {
    await new Promise<void>((r) => slotWanted.push(r));
    slot = takeSlot(bytes.length);
  }
  const w = started();
  // A copy in the slot: the caller's bytes may be a view others still read.
  new Uint8Array(slot, 0, bytes.length).set(bytes);
  const job: BodyCheckJob = { seq: ++seq, slot, length: bytes.length };
  return new Promise((resolve, reject) => {
    waiting.set(job.seq, { slot: slot!, resolve, reject });
    w.postMessage(job);
  });
}
