// ABI handling for ZKT calls: parse what the caller sent (human-readable strings or JSON objects) and pick
// the function a `method` names. Wraps ethers so the rest of the code does not depend on its details.
//
// A caller's ABI is bounded (entries and bytes) and only what a call needs is built: the fragments of the
// function `method` names, and the events and errors only once a revert or a receipt is decoded. ethers
// builds ~40 fragments a millisecond on the event loop: a 10,000-entry ABI held every other caller ~1 s.
import { Fragment, Interface, type FunctionFragment } from "ethers";
import { GatewayError, type JsonValue } from "../errors.js";
import { checkAbiBounds } from "./abiBounds.js";

/** Function names listed in a "not in the abi" error. */
const MAX_NAMES_LISTED = 50;

/** The function a call names, and what decodes its reverts and logs (built on first use). */
export interface SelectedFunction {
  fn: FunctionFragment;
  /** The function's candidates only: enough to encode the call and decode its result. */
  iface: Interface;
  /** The function, the ABI's events and its errors: for revert reasons and receipt logs. */
  decoding(): Interface;
}

type EntryKind = "function" | "decoding" | "other";

/** What an entry is and, for a function, its name, read without building its fragment. */
function classify(entry: JsonValue): { kind: EntryKind; name?: string } {
  if (typeof entry === "string") {
    const m = /^\s*(function|event|error)\s+([A-Za-z_$][\w$]*)/.exec(entry.slice(0, 300));
    if (!m) return { kind: "other" };
    return m[1] === "function" ? { kind: "function", name: m[2]! } : { kind: "decoding" };
  }
  const o = entry as { [k: string]: JsonValue };
  const type = o.type ?? "function";
  if (type === "function") return { kind: "function", name: typeof o.name === "string" ? o.name : "" };
  return type === "event" || type === "error" ? { kind: "decoding" } : { kind: "other" };
}

/** One entry's fragment; the error names the entry (ethers' Interface would only warn and skip it). */
function fragmentOf(entry: JsonValue, i: number): Fragment {
  try {
    return Fragment.from(entry as string);
  } catch (err) {
    throw new GatewayError("validation", `abi[${i}] is not a valid ABI entry: ${shortReason(err)}`, { details: { index: i } });
  }
}

/** Builds an Interface of every entry: for ABIs the gateway made itself (a compile's). */
export function parseAbi(abi: JsonValue): Interface {
  const entries = checkAbiBounds(abi);
  return new Interface(entries.map(fragmentOf));
}

/** The function `method` names: a plain name (unique, or unique for the argument count) or a full signature. */
export function selectFunction(abi: JsonValue, method: string, argCount: number): SelectedFunction {
  const entries = checkAbiBounds(abi);
  const name = method.includes("(") ? method.slice(0, method.indexOf("(")).trim() : method;
  const names = new Set<string>();
  const fragments: Fragment[] = [];
  entries.forEach((entry, i) => {
    const c = classify(entry);
    if (c.kind !== "function") return;
    if (names.size < MAX_NAMES_LISTED && c.name) names.add(c.name);
    if (c.name === name) fragments.push(fragmentOf(entry, i));
  });
  const iface = new Interface(fragments);
  const fn = resolveFunction(iface, method, argCount, names);
  let decoding: Interface | undefined;
  return {
    fn,
    iface,
    decoding() {
      decoding ??= new Interface([
        fn,
        ...entries.flatMap((entry) => {
          if (classify(entry).kind !== "decoding") return [];
          try {
            return [Fragment.from(entry as string)];
          } catch {
            return []; // an unparseable event or error decodes nothing; the call itself was valid
          }
        }),
      ]);
      return decoding;
    },
  };
}

function resolveFunction(iface: Interface, method: string, argCount: number, names: Set<string>): FunctionFragment {
  if (method.includes("(")) {
    const f = iface.getFunction(method.replace(/\s+/g, ""));
    if (!f) throw new GatewayError("validation", `method "${method}" is not in the abi`);
    return f;
  }
  const candidates: FunctionFragment[] = [];
  iface.forEachFunction((f) => {
    if (f.name === method) candidates.push(f);
  });
  if (candidates.length === 0)
    throw new GatewayError("validation", `method "${method}" is not in the abi${names.size ? ` (functions: ${[...names].join(", ")})` : ""}`);
  if (candidates.length === 1) return candidates[0]!;
  const byCount = candidates.filter((f) => f.inputs.length === argCount);
  if (byCount.length === 1) return byCount[0]!;
  throw new GatewayError(
    "validation",
    `method "${method}" is ambiguous: it is overloaded as ${candidates.map((f) => f.format("sighash")).join(", ")}; pass the full signature as method`,
    {
      details: { overloads: candidates.map((f) => f.format("sighash")) },
    },
  );
}

export function isReadOnly(f: FunctionFragment): boolean {
  return f.stateMutability === "view" || f.stateMutability === "pure";
}

function shortReason(err: unknown): string {
  const e = err as { shortMessage?: string; message?: string };
  return (e.shortMessage ?? e.message ?? String(err)).split("\n")[0]!;
}

/** Whether calling `method` of `abi` with `argCount` arguments is a read (view/pure); throws what a call would. */
export function isReadOnlyCall(abi: JsonValue, method: string, argCount: number): boolean {
  return isReadOnly(selectFunction(abi, method, argCount).fn);
}
