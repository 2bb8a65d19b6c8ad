// What bodyCheck.ts and its worker thread say to each other.
import type { ErrorKind, JsonValue } from "../../errors.js";
import type { ZktId } from "./parseZktBody.js";

export interface BodyCheckJob {
  seq: number;
  /** Memory shared with the loop: the body is its first `length` bytes, until the answer is posted. */
  slot: SharedArrayBuffer;
  length: number;
}

/** Why the body is refused, and its request id to echo; nothing when it passes (the loop parses it then). */
export interface BodyCheckAnswer {
  refused?: { kind: ErrorKind; message: string; details?: JsonValue };
  id?: ZktId | undefined;
}
