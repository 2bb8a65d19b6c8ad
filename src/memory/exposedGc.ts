// The gc() that --expose-gc would give, without asking every way the gateway is started for the flag.
import v8 from "node:v8";
import vm from "node:vm";

v8.setFlagsFromString("--expose-gc");
export const gc = vm.runInNewContext("gc") as (options: {
  type: "minor" | "major";
  execution?: "sync" | "async";
  flavor?: "regular" | "last-resort";
}) => void | Promise<void>;
