// Solidity source → ABI and bytecode, in a pool of worker threads, cached by content: the same source and
// settings compile once. The compiler is chosen by the source's pragma among the installed ones
// (compilerVersions.ts). Compiles are bounded (config `compiler`): a few workers, a deadline per compile (the
// worker is ended: solc cannot be interrupted otherwise), one compile per caller at a time and a bounded queue,
// so one caller's slow source holds one worker for at most the deadline and never the others' compiles.
import { LRUCache } from "lru-cache";
import { ttlCache } from "../../ttlCache.js";
import { Worker } from "node:worker_threads";
import { createHash } from "node:crypto";
import { GatewayError, type JsonValue } from "../../errors.js";
import { compilerFor } from "./compilerVersions.js";
import { sourcePositions } from "./sourcePositions.js";

export interface CompiledContract {
  name: string;
  abi: JsonValue[];
  bytecode: string;
}

export interface CompileOptions {
  evmVersion: string;
  /** Contract to pick; the last non-abstract contract defined in the source when absent. */
  contractName?: string;
  /** Who asks (a key, else an IP): each has at most one compile running or waiting. */
  caller?: string;
}

export interface CompilerLimits {
  /** Worker threads (each holds its own solc). */
  workers: number;
  /** A compile running longer is stopped and refused. */
  timeoutMs: number;
  /** Compiles waiting for a worker; past it new ones are refused (429). */
  queueLimit: number;
  /** After this long without a compile a worker is stopped. */
  idleMs: number;
}

const SOURCE_NAME = "Contract.sol";
const CACHE_LIMIT = 100;
/** Sources that ran past the deadline are refused at once for this long, rather than holding a worker again. */
const TIMED_OUT_MEMORY_MS = 3_600_000;
/** Compiler messages returned with line/column: a source with thousands of errors needs no more to be fixed. */
const MAX_REPORTED_ERRORS = 20;
/**
 * A warm solc holds a lot of memory. After this long without a compile the worker is stopped; the next new
 * source pays solc's cold start again, while sources already compiled are answered from the cache as before.
 */
const DEFAULT_LIMITS: CompilerLimits = { workers: 2, timeoutMs: 20_000, queueLimit: 16, idleMs: 10 * 60_000 };

interface SolcError {
  severity: "error" | "warning" | "info";
  type: string;
  message: string;
  formattedMessage?: string;
  sourceLocation?: { file: string; start: number; end: number };
}
interface SolcOutput {
  errors?: SolcError[];
  sources?: Record<string, { ast?: { nodes?: { nodeType: string; name?: string; contractKind?: string; abstract?: boolean }[] } }>;
  contracts?: Record<string, Record<string, { abi: JsonValue[]; evm: { bytecode: { object: string } } }>>;
}

interface Job {
  key: string;
  input: string;
  pkg: string;
  resolve: (output: string) => void;
  reject: (err: Error) => void;
}

/** One worker thread and the job it runs, if any. */
interface Slot {
  worker: Worker | undefined;
  job: Job | undefined;
  deadline: NodeJS.Timeout | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

export class SolidityCompiler {
  private readonly limits: CompilerLimits;
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly cache = new LRUCache<string, Promise<SolcOutput>>({ max: CACHE_LIMIT });
  /** Compile keys that ran past the deadline, with when they did. */
  private readonly timedOut = ttlCache<string, true>(CACHE_LIMIT, TIMED_OUT_MEMORY_MS);
  /** Callers with a compile running or waiting. */
  private readonly callers = new Set<string>();
  /** How many times solc actually ran (cache misses). */
  compilations = 0;

  constructor(limits: Partial<CompilerLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.slots = Array.from({ length: this.limits.workers }, () => ({ worker: undefined, job: undefined, deadline: undefined, idleTimer: undefined }));
  }

  /** Whether a solc is loaded (in a worker) right now. */
  get warm(): boolean {
    return this.slots.some((s) => s.worker !== undefined);
  }

  /** Compiles (or reuses a compile of) `code` and picks the contract to deploy. */
  async compile(code: string, options: CompileOptions): Promise<CompiledContract> {
    const input = JSON.stringify({
      language: "Solidity",
      sources: { [SOURCE_NAME]: { content: code } },
      settings: {
        evmVersion: options.evmVersion,
        optimizer: { enabled: true, runs: 200 },
        outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"], "": ["ast"] } },
      },
    });
    const pkg = compilerFor(code).pkg;
    const key = createHash("sha256").update(pkg).update(input).digest("hex");
    let output = this.cache.get(key);
    if (!output) {
      this.refuseKnownSlow(key);
      output = this.admit(key, input, pkg, options.caller).then((text) => JSON.parse(text) as SolcOutput);
      this.cache.set(key, output);
      output.catch(() => this.cache.delete(key));
    }
    return pickContract(await output, code, options.contractName);
  }

  /** Stops every worker (they are started again on the next compile) and fails what waits. */
  async close(): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new GatewayError("upstream_unavailable", "the gateway is stopping"));
    await Promise.all(this.slots.map((slot) => this.stop(slot)));
  }

  private refuseKnownSlow(key: string): void {
    if (this.timedOut.has(key)) throw this.timeoutError();
  }

  private timeoutError(): GatewayError {
    const s = this.limits.timeoutMs / 1000;
    return new GatewayError("compilation", `compile exceeded ${s} s: the source is too costly to compile here`, {
      details: { timeoutMs: this.limits.timeoutMs },
    });
  }

  /** Queues a compile under the per-caller and queue bounds. */
  private admit(key: string, input: string, pkg: string, caller: string | undefined): Promise<string> {
    if (caller !== undefined && this.callers.has(caller))
      throw new GatewayError("rate_limited", "a compile of yours is already running; send the next source once it is answered", {
        retryAfterSeconds: 1,
      });
    if (this.queue.length >= this.limits.queueLimit && !this.slots.some((s) => s.job === undefined))
      throw new GatewayError("rate_limited", "the Solidity compiler is busy; try again shortly", { retryAfterSeconds: 5 });
    this.compilations++;
    if (caller !== undefined) this.callers.add(caller);
    const done = new Promise<string>((resolve, reject) => {
      this.queue.push({ key, input, pkg, resolve, reject });
    });
    const release = (): void => {
      if (caller !== undefined) this.callers.delete(caller);
    };
    done.then(release, release);
    this.dispatch();
    return done;
  }

  /** Hands waiting jobs to free workers. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job !== undefined) continue;
      const job = this.queue.shift()!;
      clearTimeout(slot.idleTimer);
      slot.job = job;
      slot.deadline = setTimeout(() => this.expire(slot, job), this.limits.timeoutMs);
      this.workerOf(slot).postMessage({ input: job.input, pkg: job.pkg });
    }
  }

  /** The compile ran past the deadline: its worker is ended and the source remembered as too slow. */
  private expire(slot: Slot, job: Job): void {
    if (slot.job !== job) return;
    this.timedOut.set(job.key, true);
    this.finish(slot, () => job.reject(this.timeoutError()));
    void this.stop(slot);
  }

  private finish(slot: Slot, settle: () => void): void {
    clearTimeout(slot.deadline);
    slot.job = undefined;
    settle();
    this.dispatch();
    if (slot.job === undefined && slot.worker !== undefined) {
      clearTimeout(slot.idleTimer);
      slot.idleTimer = setTimeout(() => void this.stop(slot), this.limits.idleMs).unref();
    }
  }

  private async stop(slot: Slot): Promise<void> {
    clearTimeout(slot.idleTimer);
    clearTimeout(slot.deadline);
    const w = slot.worker;
    slot.worker = undefined;
    const job = slot.job;
    slot.job = undefined;
    job?.reject(new GatewayError("upstream_unavailable", "the gateway is stopping"));
    await w?.terminate();
  }

  private workerOf(slot: Slot): Worker {
    if (slot.worker) return slot.worker;
    const worker = new Worker(new URL("./solcWorker.mjs", import.meta.url));
    worker.unref();
    worker.on("message", (msg: { output?: string; error?: string }) => {
      const job = slot.job;
      if (slot.worker !== worker || !job) return;
      this.finish(slot, () =>
        msg.error !== undefined
          ? job.reject(new GatewayError("internal", "the Solidity compiler failed", { cause: new Error(msg.error) }))
          : job.resolve(msg.output!),
      );
    });
    // A crashed or exited worker fails its job; the next compile starts a new one.
    const lost = (err: Error): void => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const job = slot.job;
      if (job) this.finish(slot, () => job.reject(new GatewayError("internal", "the Solidity compiler crashed", { cause: err })));
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the solc worker exited with code ${code}`)));
    slot.worker = worker;
    return worker;
  }
}

function pickContract(out: SolcOutput, code: string, contractName: string | undefined): CompiledContract {
  const errors = (out.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    const shown = errors.slice(0, MAX_REPORTED_ERRORS);
    const positions = sourcePositions(
      code,
      shown.map((e) => (e.sourceLocation && e.sourceLocation.file === SOURCE_NAME ? e.sourceLocation.start : -1)),
    );
    throw new GatewayError("compilation", `the source does not compile: ${errors[0]!.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ""}`, {
      details: shown.map((e, i) => ({
        type: e.type,
        message: e.message,
        ...positions[i],
        ...(e.formattedMessage ? { formattedMessage: e.formattedMessage } : {}),
      })),
    });
  }
  const compiled = out.contracts?.[SOURCE_NAME] ?? {};
  const defined = (out.sources?.[SOURCE_NAME]?.ast?.nodes ?? [])
    .filter((n) => n.nodeType === "ContractDefinition" && n.contractKind === "contract" && !n.abstract)
    .map((n) => n.name!);
  if (defined.length === 0)
    throw new GatewayError("compilation", "the source defines no deployable contract (only interfaces, libraries or abstract contracts)");
  const name = contractName ?? defined[defined.length - 1]!;
  const c = compiled[name];
  if (!c || !defined.includes(name))
    throw new GatewayError("validation", `contractName "${name}" is not a deployable contract in the source (defined: ${defined.join(", ")})`);
  return { name, abi: c.abi, bytecode: "0x" + c.evm.bytecode.object };
}
