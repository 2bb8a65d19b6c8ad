// ABI handling for ZKT calls: parse what the caller sent (human-readable strings or JSON objects) and pick
// the function a `method` names. Wraps ethers so the rest of the code does not depend on its details.
import { Fragment, Interface, type FunctionFragment } from "ethers";
import { GatewayError, type JsonValue } from "../errors.js";

export function parseAbi(abi: JsonValue): Interface {
  if (!Array.isArray(abi) || abi.length === 0)
    throw new GatewayError("validation", "abi must be a non-empty array of ABI entries (human-readable strings or JSON objects)");
  abi.forEach((entry, i) => {
    if (typeof entry !== "string" && (typeof entry !== "object" || entry === null || Array.isArray(entry))) {
      throw new GatewayError("validation", `abi[${i}] must be a human-readable string or an ABI JSON object`);
    }
  });
  try {
    // Parse entry by entry so the error names the entry that is wrong (ethers would skip or throw globally).
    abi.forEach((entry, i) => {
      try {
        Fragment.from(entry as string); // throws, where Interface would only warn and skip
      } catch (err) {
        throw new GatewayError("validation", `abi[${i}] is not a valid ABI entry: ${shortReason(err)}`, { details: { index: i } });
      }
    });
    return new Interface(abi as string[]);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError("validation", `abi could not be parsed: ${shortReason(err)}`);
  }
}

/** The function `method` names: a plain name (unique, or unique for the argument count) or a full signature. */
export function resolveFunction(iface: Interface, method: string, argCount: number): FunctionFragment {
  if (method.includes("(")) {
    const f = iface.getFunction(method.replace(/\s+/g, ""));
    if (!f) throw new GatewayError("validation", `method "${method}" is not in the abi`);
    return f;
  }
  const candidates: FunctionFragment[] = [];
  iface.forEachFunction((f) => {
    if (f.name === method) candidates.push(f);
  });
  if (candidates.length === 0) {
    const names: string[] = [];
    iface.forEachFunction((f) => names.push(f.name));
    throw new GatewayError("validation", `method "${method}" is not in the abi${names.length ? ` (functions: ${[...new Set(names)].join(", ")})` : ""}`);
  }
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
  return isReadOnly(resolveFunction(parseAbi(abi), method, argCount));
}
