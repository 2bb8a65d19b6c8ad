// eth_subscribe's (and SubscribeLogs') logs filter read from a request, checked as geth checks it.
import { GatewayError, type JsonValue } from "../errors.js";
import type { LogFilter } from "./logFilter.js";

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The filter in `raw`, or -32602 saying what was wrong. */
export function parseLogFilter(raw: JsonValue | undefined): LogFilter {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new GatewayError("invalid_params", "Invalid params: the logs filter must be an object {address?, topics?}");
  const filter: LogFilter = {};
  const { address, topics, ...rest } = raw;
  const unknown = Object.keys(rest).filter((k) => k !== "fromBlock" && k !== "toBlock");
  if (unknown.length > 0) throw new GatewayError("invalid_params", `Invalid params: unknown logs filter field(s) ${unknown.join(", ")}`);
  if (address !== undefined && address !== null) {
    const list = Array.isArray(address) ? address : [address];
    if (!list.every((a) => typeof a === "string" && ADDRESS.test(a)))
      throw new GatewayError("invalid_params", "Invalid params: address must be a 0x address or a list of them");
    filter.addresses = (list as string[]).map((a) => a.toLowerCase());
  }
  if (topics !== undefined && topics !== null) {
    if (!Array.isArray(topics) || topics.length > 4) throw new GatewayError("invalid_params", "Invalid params: topics must be a list of at most 4 positions");
    filter.topics = topics.map((t) => {
      if (t === null) return null;
      const list = Array.isArray(t) ? t : [t];
      if (!list.every((x) => typeof x === "string" && HEX32.test(x)))
        throw new GatewayError("invalid_params", "Invalid params: a topic must be a 32-byte 0x value, a list of them, or null");
      return (list as string[]).map((x) => x.toLowerCase());
    });
  }
  return filter;
}
