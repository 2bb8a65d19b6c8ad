// A receipt's logs with what an ABI says of them: each log's event name and named arguments where the ABI has
// the event, null where it does not (a log of another contract, or an event the ABI leaves out). For ZKT write
// receipts and webhook events alike.
import type { Interface } from "ethers";
import type { JsonValue } from "../errors.js";
import { formatNamed } from "./formatValues.js";

export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
}

export interface DecodedLog {
  address: string;
  event: string | null;
  args: { [k: string]: JsonValue } | null;
  topics: string[];
  data: string;
  logIndex: number;
}

export function decodeLogs(logs: readonly RawLog[], iface: Interface): DecodedLog[] {
  return logs.map((l) => {
    let parsed: ReturnType<Interface["parseLog"]> = null;
    try {
      parsed = iface.parseLog({ topics: l.topics, data: l.data });
    } catch {
      parsed = null;
    }
    return {
      address: l.address,
      event: parsed?.name ?? null,
      args: parsed ? formatNamed(parsed.fragment.inputs, parsed.args) : null,
      topics: l.topics,
      data: l.data,
      logIndex: Number(BigInt(l.logIndex)),
    };
  });
}
