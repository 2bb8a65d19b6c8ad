// A node's revert → a ZKT error saying why: Error(string) reasons, Panic codes, and custom errors from the
// caller's ABI, decoded; the raw data kept in details.
import { AbiCoder, type Interface } from "ethers";
import { GatewayError } from "../errors.js";
import { formatNamed } from "../abi/formatValues.js";

const ERROR_STRING = "0x08c379a0";
const PANIC = "0x4e487b71";

export function revertError(err: GatewayError, iface: Interface | undefined, what: string): GatewayError {
  const data = revertData(err);
  if (data?.startsWith(ERROR_STRING)) {
    const [reason] = AbiCoder.defaultAbiCoder().decode(["string"], "0x" + data.slice(10)) as unknown as [string];
    return new GatewayError("execution_reverted", `${what} reverted: ${reason}`, { details: { reason, data } });
  }
  if (data?.startsWith(PANIC)) {
    const [code] = AbiCoder.defaultAbiCoder().decode(["uint256"], "0x" + data.slice(10)) as unknown as [bigint];
    return new GatewayError("execution_reverted", `${what} reverted: panic 0x${code.toString(16)}`, { details: { panicCode: Number(code), data } });
  }
  if (data && data.length >= 10 && iface) {
    try {
      const parsed = iface.parseError(data);
      if (parsed) {
        return new GatewayError("execution_reverted", `${what} reverted: ${parsed.name}(${parsed.fragment.inputs.map((p) => p.type).join(",")})`, {
          details: { error: parsed.name, args: formatNamed(parsed.fragment.inputs, parsed.args), data },
        });
      }
    } catch {
      // not one of the ABI's errors
    }
  }
  return new GatewayError("execution_reverted", `${what} reverted${data && data !== "0x" ? " with unrecognised data" : " without a reason"}`, {
    details: data ? { data } : { message: err.message },
  });
}

function revertData(err: GatewayError): string | undefined {
  const d = err.details;
  if (typeof d === "string" && d.startsWith("0x")) return d;
  if (d && typeof d === "object" && !Array.isArray(d) && typeof d.data === "string") return d.data;
  return undefined;
}
