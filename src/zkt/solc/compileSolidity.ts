// Solidity source → ABI and bytecode, in a worker thread, cached by content: the same source and settings
// compile once. The compiler is chosen by the source's pragma among the installed ones (compilerVersions.ts).
import { Worker } from "node:worker_threads";
import { createHash } from "node:crypto";
import { GatewayError, type JsonValue } from "../../errors.js";
import { compilerFor } from "./compilerVersions.js";

export interface CompiledContract {
  name: string;
  abi: JsonValue[];
  bytecode: string;
}

export interface CompileOptions {
  evmVersion: string;
  /** Contract to pick; the last non-abstract contract defined in the source when absent. */
  contractName?: string;
}

const SOURCE_NAME = "Contract.sol";
const CACHE_LIMIT = 100;
/**
 * A warm solc holds ~110-170 MB (measured: RSS 88 -> 259 MB after one compile, 148 MB once it stopped). After
 * this long without a compile the worker is stopped; the next new source pays solc's cold start (~1.3 s,
 * bench) again, while sources already compiled are answered from the cache as before.
 */
const DEFAULT_IDLE_MS = 10 * 60_000;

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

export class SolidityCompiler {
  private worker: Worker | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (out: string) => void; reject: (err: Error) => void }>();
  private readonly cache = new Map<string, Promise<SolcOutput>>();
  /** How many times solc actually ran (cache misses). */
  compilations = 0;

  constructor(private readonly options: { idleMs?: number } = {}) {}

  /** Whether solc is loaded (in its worker) right now. */
  get warm(): boolean {
    return this.worker !== undefined;
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
      this.compilations++;
      output = this.run(input, pkg).then((text) => JSON.parse(text) as SolcOutput);
      this.cache.set(key, output);
      if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
      output.catch(() => this.cache.delete(key));
    }
    return pickContract(await output, code, options.contractName);
  }

  /** Stops the worker (it is started again on the next compile). */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private run(input: string, pkg: string): Promise<string> {
    clearTimeout(this.idleTimer);
    const worker = this.ensureWorker();
    const id = this.nextId++;
    const done = new Promise<string>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, input, pkg });
    });
    const idle = (): void => {
      if (this.waiting.size > 0 || this.worker !== worker) return;
      this.idleTimer = setTimeout(() => void this.close(), this.options.idleMs ?? DEFAULT_IDLE_MS).unref();
    };
    done.then(idle, idle);
    return done;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./solcWorker.mjs", import.meta.url));
    worker.unref();
    worker.on("message", (msg: { id: number; output?: string; error?: string }) => {
      const w = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      if (!w) return;
      if (msg.error !== undefined) w.reject(new GatewayError("internal", "the Solidity compiler failed", { cause: new Error(msg.error) }));
      else w.resolve(msg.output!);
    });
    // A crashed or exited worker fails what waits on it; the next compile starts a new one.
    const lost = (err: Error): void => {
      if (this.worker !== worker) return;
      for (const w of this.waiting.values()) w.reject(new GatewayError("internal", "the Solidity compiler crashed", { cause: err }));
      this.waiting.clear();
      this.worker = undefined;
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the solc worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

function pickContract(out: SolcOutput, code: string, contractName: string | undefined): CompiledContract {
  const errors = (out.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new GatewayError("compilation", `the source does not compile: ${errors[0]!.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ""}`, {
      details: errors.map((e) => ({
        type: e.type,
        message: e.message,
        ...position(code, e),
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

function position(code: string, e: SolcError): { line?: number; column?: number } {
  if (!e.sourceLocation || e.sourceLocation.file !== SOURCE_NAME || e.sourceLocation.start < 0) return {};
  const before = code.slice(0, e.sourceLocation.start);
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}
